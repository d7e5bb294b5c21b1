// papaparse (jslib): Papa Parse's own build (MIT), vendored and evaluated
// just above; __vendored is its export, this module's default as on jslib.
const Papa = __vendored;
export default Papa;
