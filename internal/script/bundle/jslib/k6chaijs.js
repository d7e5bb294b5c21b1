// k6chaijs (jslib): chai's BDD API where every assertion is a k6 check, and
// describe() a group that catches what its body throws, as k6's
// documentation of javascript-api/jslib/k6chaijs describes. chai itself is
// the vendored build (MIT) evaluated just above: __vendored is its export.
import { check, group } from 'k6';

const chai = __vendored;

// k6chaijs's settings, beside chai's own, with its documented defaults.
Object.assign(chai.config, {
  truncateMsgThreshold: 300,
  truncateVariableThreshold: 100,
  aggregateChecks: true,
  logFailures: false,
});

function truncate(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, n) + '...' : s;
}

// checkName is an assertion's message as its check's name: #{this} is the
// label given to expect() (or the value itself when aggregateChecks is
// off), #{exp} the expected value; the actual value (#{act}, "but got
// ...") only when aggregateChecks is off, so that one assertion keeps one
// check name across iterations.
function checkName(assertion, template, expected, actual) {
  if (typeof template === 'function') template = template();
  const cfg = chai.config;
  if (cfg.aggregateChecks) template = String(template).replace(/,? but (got|was) #\{act\}/g, '');
  const show = (v) => truncate(chai.util.objDisplay(v), cfg.truncateVariableThreshold);
  const label = chai.util.flag(assertion, 'message');
  const subject = label ? label : cfg.aggregateChecks ? 'value' : show(chai.util.flag(assertion, 'object'));
  const name = String(template)
    .replace(/#\{this\}/g, () => subject)
    .replace(/#\{exp\}/g, () => show(expected))
    .replace(/#\{act\}/g, () => (cfg.aggregateChecks ? 'actual' : show(actual)));
  return truncate(name, cfg.truncateMsgThreshold);
}

// Property assertions can be called too, as k6's documentation writes
// them (expect(x).to.be.true()): each becomes a chainable method whose
// property access asserts and whose call does nothing more.
for (const name of ['true', 'false', 'null', 'undefined', 'NaN', 'exist', 'empty', 'ok', 'arguments', 'Arguments', 'extensible', 'sealed', 'frozen', 'finite']) {
  const desc = Object.getOwnPropertyDescriptor(chai.Assertion.prototype, name);
  if (!desc || typeof desc.get !== 'function') continue;
  delete chai.Assertion.prototype[name];
  chai.Assertion.addChainableMethod(name, function () {}, function () {
    desc.get.call(this);
  });
}

// failures counts failed assertions, for describe() to report.
let failures = 0;

const chaiAssert = chai.Assertion.prototype.assert;
chai.Assertion.prototype.assert = function (expr, msg, negateMsg, expected, actual, showDiff) {
  const negate = chai.util.flag(this, 'negate');
  const ok = negate ? !expr : !!expr;
  const object = chai.util.flag(this, 'object');
  const name = checkName(this, negate ? negateMsg : msg, expected, arguments.length > 4 ? actual : object);
  check(null, { [name]: () => ok });
  if (!ok) {
    failures++;
    if (chai.config.logFailures) {
      console.warn(`${name}: actual ${chai.util.objDisplay(object)}, expected ${chai.util.objDisplay(expected)}`);
    }
  }
  return chaiAssert.apply(this, arguments);
};

export function describe(name, fn) {
  const before = failures;
  let threw = false;
  group(name, () => {
    try {
      fn();
    } catch (e) {
      threw = true;
      if (!(e instanceof chai.AssertionError)) {
        const what = e instanceof Error ? e.message : String(e);
        check(null, { [`Exception raised "${what}"`]: () => false });
      }
    }
  });
  return !threw && failures === before;
}

export const expect = chai.expect;
export { chai };
export default chai;
