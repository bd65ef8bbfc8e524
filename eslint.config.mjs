// The lint toolchain is its own npm project under tools/lint (see its package.json for why); so is its config.
export { default } from "./tools/lint/eslint.config.mjs"
