// Writes `hex_bits,Number.prototype.toString` lines for ECMAScript's own
// formatting of doubles, the reference for RFC 8785's numbers.
//
//   node gen.mjs [count] [seed] > lines.txt
//   node gen.mjs powers > powers.txt
//
// `hex_bits` is the IEEE 754 bit pattern in lower-case hex without leading
// zeros (the layout of the JCS test file, so one checker reads both). The
// doubles come from a seeded xorshift64* generator, so a run is reproducible:
// random bit patterns over every exponent, denormals, integers, and values
// built to be exactly halfway between two shortest candidates (the ties that
// ECMAScript breaks to the even digit).

// `powers`: every power of two and the doubles on either side of it, where
// the gap between doubles halves below and a tie's lower candidate may not
// read back.
if (process.argv[2] === "powers") {
  const lines = [];
  for (let e = -1074; e <= 1023; e++) {
    const bits = bitsOfPower(e);
    for (const b of [bits - 1n, bits, bits + 1n]) {
      const x = fromBitsPower(b);
      if (b > 0n && Number.isFinite(x)) lines.push(`${b.toString(16)},${x.toString()}`);
    }
  }
  process.stdout.write(lines.join("\n") + "\n");
  process.exit(0);
}

function bitsOfPower(e) {
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat64(0, Math.pow(2, e));
  return v.getBigUint64(0);
}

function fromBitsPower(b) {
  const v = new DataView(new ArrayBuffer(8));
  v.setBigUint64(0, b);
  return v.getFloat64(0);
}

const count = Number(process.argv[2] ?? 20000);
let state = BigInt(process.argv[3] ?? 0x70016a7e) | 1n;
const MASK = (1n << 64n) - 1n;

function next64() {
  state ^= state >> 12n;
  state ^= (state << 25n) & MASK;
  state ^= state >> 27n;
  return (state * 0x2545f4914f6cdd1dn) & MASK;
}

function below(n) {
  return Number(next64() % BigInt(n));
}

const view = new DataView(new ArrayBuffer(8));

function fromBits(bits) {
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}

function bitsOf(x) {
  view.setFloat64(0, x);
  return view.getBigUint64(0);
}

// A double from sign, biased exponent (0..2046) and 52 fraction bits.
function compose(sign, exponent, fraction) {
  return (BigInt(sign) << 63n) | (BigInt(exponent) << 52n) | (fraction & ((1n << 52n) - 1n));
}

// m × 2^e for an integer m below 2^53, exactly.
function scaled(m, e) {
  return Number(m) * Math.pow(2, e);
}

const shapes = [
  // Any bit pattern (NaN and infinities are skipped below).
  () => next64(),
  // Every exponent equally likely, random fraction.
  () => compose(below(2), below(2047), next64()),
  // Denormals, and small ones with few fraction bits.
  () => compose(below(2), 0, next64() >> BigInt(below(53))),
  // Near the normal/denormal border and the top of the range.
  () => compose(below(2), [0, 1, 2, 2045, 2046][below(5)], next64()),
  // Integers, up to 2^53 and beyond.
  () => bitsOf((below(2) ? -1 : 1) * Number(next64() >> BigInt(below(64)))),
  // Few significant bits and a moderate exponent: exact decimals one digit
  // longer than the shortest output, ending in 5 (the ties).
  () => {
    const bitsLen = 30 + below(24);
    const m = (next64() >> BigInt(64 - bitsLen)) | 1n;
    const x = scaled(m, -(1 + below(14)));
    return bitsOf(below(2) ? -x : x);
  },
  // Near powers of ten, where the shortest output changes length.
  () => {
    const x = Math.pow(10, below(600) - 300);
    return bitsOf(x) + BigInt(below(7)) - 3n;
  },
];

const out = [];
let written = 0;
while (written < count) {
  const bits = shapes[below(shapes.length)]() & MASK;
  const x = fromBits(bits);
  if (!Number.isFinite(x)) continue;
  out.push(`${bits.toString(16)},${x.toString()}`);
  written++;
  if (out.length === 65536) {
    process.stdout.write(out.join("\n") + "\n");
    out.length = 0;
  }
}
if (out.length > 0) process.stdout.write(out.join("\n") + "\n");
