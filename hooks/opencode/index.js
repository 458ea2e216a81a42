// chrollo for OpenCode as its own package (the chrollo-opencode plugin): the plugin file
// `chrollo install opencode` writes, loaded as it is from this clone — one file, two ways in
// (hooks/README.md).
export { ChrolloPlugin } from "../../chrollo/data/opencode-plugin.js";
