// k6-utils (jslib), from k6's documentation of javascript-api/jslib/utils.
// getCurrentStageIndex and the tagWithCurrentStage* helpers are not
// exported: they read exec.test.options and write exec.vu.tags, which
// throttle's k6/execution lacks, so importing them is refused at load.
export function randomIntBetween(min, max) {
  return Math.floor(Math.random() * (max - min + 1) + min);
}

export function randomItem(arrayOfItems) {
  return arrayOfItems[Math.floor(Math.random() * arrayOfItems.length)];
}

export function randomString(length, charset = 'abcdefghijklmnopqrstuvwxyz0123456789') {
  let s = '';
  for (let i = 0; i < length; i++) s += charset.charAt(Math.floor(Math.random() * charset.length));
  return s;
}

// uuidv4: a random (version 4) UUID; secure takes its bytes from the
// WebCrypto generator rather than Math.random.
export function uuidv4(secure = false) {
  if (secure && globalThis.crypto && globalThis.crypto.randomUUID) return globalThis.crypto.randomUUID();
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) => {
    const r = (Math.random() * 16) | 0;
    return (c === 'x' ? r : (r & 0x3) | 0x8).toString(16);
  });
}

// findBetween: the text between left and right, the first occurrence or,
// with repeat, every one.
export function findBetween(content, left, right, repeat = false) {
  const found = [];
  let at = 0;
  for (;;) {
    const start = content.indexOf(left, at);
    if (start === -1) break;
    const from = start + left.length;
    const end = content.indexOf(right, from);
    if (end === -1) break;
    const match = content.substring(from, end);
    if (!repeat) return match;
    found.push(match);
    at = end + right.length;
  }
  return repeat ? found : null;
}

// normalDistributionStages: stages ramping VUs up and down along a bell
// curve: a warm-up stage (10% of the time, 10% of maxVus), numberOfStages
// stages whose targets follow the normal density over [-2σ·2, 2σ·2] (an
// odd count peaks at maxVus), a ramp-down to 0 (10% of the time).
export function normalDistributionStages(maxVus, durationSeconds, numberOfStages = 10) {
  const stdDev = 0.5;
  const mean = 0;
  const warm = Math.round(durationSeconds * 0.1);
  const each = Math.round((durationSeconds * 0.8) / numberOfStages);
  const density = (x) => Math.exp(-0.5 * Math.pow((x - mean) / stdDev, 2)) / (stdDev * Math.sqrt(2 * Math.PI));
  const peak = density(mean);
  const stages = [{ duration: `${warm}s`, target: Math.round(maxVus * 0.1) }];
  for (let i = 1; i <= numberOfStages; i++) {
    const x = -2 + (4 * i) / (numberOfStages + 1);
    stages.push({ duration: `${each}s`, target: Math.round((maxVus * density(x)) / peak) });
  }
  stages.push({ duration: `${warm}s`, target: 0 });
  return stages;
}
