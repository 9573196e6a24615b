// The driver's clock: monotonic, in ns from the driver's start (so that a Number holds it exactly).
const BASE = process.hrtime.bigint();

export const now = () => Number(process.hrtime.bigint() - BASE);
