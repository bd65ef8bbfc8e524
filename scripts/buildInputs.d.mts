// The types of buildInputs.mjs, for test/support/freshBuild.ts.
export declare const stampFile: string
export declare const inputsHash: () => string
export declare const upToDate: (hash?: string) => boolean
