// Each qdisc kind's TCA_OPTIONS, as `tc qdisc add` (iproute2 6.1) sends them,
// and read back from the kernel's dumps in the units the specs use:
//   tbf    nest { TCA_TBF_PARMS tc_tbf_qopt, TCA_TBF_BURST u32, [TCA_TBF_RATE64], TCA_TBF_RTAB }
//   htb    nest { TCA_HTB_INIT tc_htb_glob }
//   netem  not a nest: tc_netem_qopt, then [TCA_NETEM_REORDER], [TCA_NETEM_CORRUPT], [TCA_NETEM_RATE64], [TCA_NETEM_RATE]
//   pfifo  not a nest: tc_fifo_qopt (u32 limit), only when a limit is given
// tc/q_tbf.c, q_htb.c, q_netem.c, q_fifo.c show how tc computes each field.
import { attr, AttributeMap, encodeAttributes, type Attribute } from './attributes.js';
import { checkUint, invalid } from './checks.js';
import * as T from './tc-constants.js';
import { percentToU32, rate32, rateTable, transmitSize, transmitTicks, ticksToUs, u32ToPercent, usToTicks } from './tc-core.js';

/** tbf's options as list() reads them: the rate and burst (bytes per second, bytes) and the queue limit (bytes). */
export interface TbfOptions {
  /** Bytes per second. */
  rate: number;
  /** Bytes, as tc prints it back (the kernel keeps a time, so a byte or so may be lost to rounding). */
  burst: number;
  /** Bytes queued at most. */
  limit: number;
}

/** htb's options as list() reads them. */
export interface HtbOptions {
  /** The minor of the class unclassified traffic goes to (0: none, sent directly). */
  defaultClass: number;
}

/** netem's options as list() reads them, in the units of NetemQdiscSpec. */
export interface NetemOptions {
  /** Microseconds. */
  delay: number;
  /** Microseconds. */
  jitter: number;
  /** Percent. */
  loss: number;
  /** Percent. */
  duplicate: number;
  /** Percent. */
  corrupt: number;
  /** Percent. */
  reorder: number;
  /** Packets. */
  limit: number;
  /** Bytes per second; absent when not limited. */
  rate?: number;
}

/** pfifo's options as list() reads them. */
export interface PfifoOptions {
  /** Packets queued at most. */
  limit: number;
}

/** A u64 attribute (TCA_*_RATE64), host order. */
export const u64 = (type: number, n: number): Attribute => {
  const value = Buffer.alloc(8);
  value.writeBigUInt64LE(BigInt(n));
  return attr.bytes(type, value);
};

/** A rate in bytes per second: a positive safe integer. */
export function checkRate(value: unknown, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1) throw invalid(`${what} must be a whole number of bytes per second from 1, got ${String(value)}`);
  return value as number;
}

/** A time in microseconds, in scheduler ticks as tc sends it. */
function ticks(value: unknown, what: string): number {
  const us = checkUint(value, `${what} (microseconds)`);
  const t = usToTicks(us);
  if (t === undefined) throw invalid(`${what} of ${us} µs is too long for the kernel's 32-bit tick count`);
  return t;
}

/** The ticks sending `burst` bytes at `rate` takes (tc_calc_xmittime), refused when over 32 bits. */
export function burstTicks(rate: number, burst: number, what: string): number {
  const t = transmitTicks(rate, burst);
  if (t === undefined) throw invalid(`${what} of ${burst} bytes takes too long at ${rate} bytes per second for the kernel's 32-bit tick count`);
  return t;
}

function percent(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) throw invalid(`${what} must be a percentage from 0 to 100, got ${String(value)}`);
  return percentToU32(value);
}

/** struct tc_netem_reorder / tc_netem_corrupt: probability, correlation (0). */
function probability(type: number, value: unknown, what: string): Attribute {
  const out = Buffer.alloc(8);
  out.writeUInt32LE(percent(value, what), 0);
  return attr.bytes(type, out);
}

/** tbf: the limit is given, or computed from a latency as tc computes it (rate × latency + burst). */
export function tbfOptions(spec: { rate: unknown; burst: unknown; limit?: unknown; latency?: unknown }): Attribute[] {
  const rate = checkRate(spec.rate, 'tbf rate');
  const burst = checkUint(spec.burst, 'tbf burst (bytes)', 0xffffffff, 1);
  if ((spec.limit === undefined) === (spec.latency === undefined)) throw invalid('tbf takes a limit (bytes) or a latency (microseconds): one of them');
  const limit =
    spec.limit !== undefined ? checkUint(spec.limit, 'tbf limit (bytes)') : Math.trunc((rate * checkUint(spec.latency, 'tbf latency (microseconds)')) / 1_000_000 + burst);
  if (limit > 0xffffffff) throw invalid(`tbf limit of ${limit} bytes from that latency is over 32 bits`);
  const { table, spec: ratespec } = rateTable(rate, 0);
  const qopt = Buffer.alloc(T.TC_TBF_QOPT_SIZE);
  ratespec.copy(qopt, 0);
  qopt.writeUInt32LE(limit, 24);
  qopt.writeUInt32LE(burstTicks(rate32(rate), burst, 'tbf burst'), 28);
  const nested = [attr.bytes(T.TCA_TBF_PARMS, qopt), attr.u32(T.TCA_TBF_BURST, burst)];
  if (rate >= 2 ** 32) nested.push(u64(T.TCA_TBF_RATE64, rate));
  nested.push(attr.bytes(T.TCA_TBF_RTAB, table));
  return [attr.nest(T.TCA_OPTIONS, nested)];
}

export function parseTbf(options: AttributeMap): TbfOptions | undefined {
  const parms = options.get(T.TCA_TBF_PARMS);
  if (parms === undefined || parms.length < T.TC_TBF_QOPT_SIZE) return undefined;
  const rate64 = options.get(T.TCA_TBF_RATE64);
  const rate = rate64 !== undefined && rate64.length >= 8 ? Number(rate64.readBigUInt64LE(0)) : parms.readUInt32LE(8);
  return { rate, burst: transmitSize(rate, parms.readUInt32LE(28)), limit: parms.readUInt32LE(24) };
}

/** htb: tc_htb_glob { version 3, r2q 10, defcls, debug 0, direct_pkts 0 }. */
export function htbOptions(spec: { defaultClass?: unknown }): Attribute[] {
  const glob = Buffer.alloc(T.TC_HTB_GLOB_SIZE);
  glob.writeUInt32LE(T.TC_HTB_PROTOVER, 0);
  glob.writeUInt32LE(10, 4);
  glob.writeUInt32LE(spec.defaultClass === undefined ? 0 : checkUint(spec.defaultClass, 'htb defaultClass (a class minor)', 0xffff), 8);
  return [attr.nest(T.TCA_OPTIONS, [attr.bytes(T.TCA_HTB_INIT, glob)])];
}

export function parseHtb(options: AttributeMap): HtbOptions | undefined {
  const glob = options.get(T.TCA_HTB_INIT);
  return glob === undefined || glob.length < T.TC_HTB_GLOB_SIZE ? undefined : { defaultClass: glob.readUInt32LE(8) };
}

/** netem: the struct (times in ticks, probabilities of 2^32 - 1), then its attributes; the limit 1000 packets unless said, as tc. */
export function netemOptions(spec: {
  delay?: unknown;
  jitter?: unknown;
  loss?: unknown;
  duplicate?: unknown;
  corrupt?: unknown;
  reorder?: unknown;
  limit?: unknown;
  rate?: unknown;
}): Attribute[] {
  const qopt = Buffer.alloc(T.TC_NETEM_QOPT_SIZE);
  qopt.writeUInt32LE(spec.delay === undefined ? 0 : ticks(spec.delay, 'netem delay'), 0);
  qopt.writeUInt32LE(spec.limit === undefined ? 1000 : checkUint(spec.limit, 'netem limit (packets)'), 4);
  qopt.writeUInt32LE(spec.loss === undefined ? 0 : percent(spec.loss, 'netem loss'), 8);
  qopt.writeUInt32LE(spec.duplicate === undefined ? 0 : percent(spec.duplicate, 'netem duplicate'), 16);
  qopt.writeUInt32LE(spec.jitter === undefined ? 0 : ticks(spec.jitter, 'netem jitter'), 20);
  const after: Attribute[] = [];
  if (spec.reorder !== undefined) {
    // Reordering sends some packets at once while the rest wait `delay`: without a delay there is nothing to reorder (tc refuses it too).
    if (spec.delay === undefined || spec.delay === 0) throw invalid('netem reorder needs a delay');
    qopt.writeUInt32LE(1, 12); // gap 1, as tc sets it for a reorder without one
    after.push(probability(T.TCA_NETEM_REORDER, spec.reorder, 'netem reorder'));
  }
  if (spec.corrupt !== undefined) after.push(probability(T.TCA_NETEM_CORRUPT, spec.corrupt, 'netem corrupt'));
  if (spec.rate !== undefined) {
    const rate = checkRate(spec.rate, 'netem rate');
    if (rate >= 2 ** 32) after.push(u64(T.TCA_NETEM_RATE64, rate));
    const ratespec = Buffer.alloc(T.TC_NETEM_RATE_SIZE);
    ratespec.writeUInt32LE(rate32(rate), 0);
    after.push(attr.bytes(T.TCA_NETEM_RATE, ratespec));
  }
  return [attr.bytes(T.TCA_OPTIONS, Buffer.concat([qopt, encodeAttributes(after)]))];
}

/** Percentages read back to six decimals: 1% is sent as 42949673 / (2^32 - 1), which reads as 1.0000000002. */
const readPercent = (n: number): number => Math.round(u32ToPercent(n) * 1e6) / 1e6;

/** netem's dump: the struct, then attributes; 64-bit nanosecond times (kernel 4.15+) preferred to the struct's ticks. */
export function parseNetem(raw: Buffer): NetemOptions | undefined {
  if (raw.length < T.TC_NETEM_QOPT_SIZE) return undefined;
  const a = AttributeMap.parse(raw, T.TC_NETEM_QOPT_SIZE);
  const ns = (type: number, ticksAt: number): number => {
    const value = a.get(type);
    return value !== undefined && value.length >= 8 ? Math.round(Number(value.readBigInt64LE(0)) / 1000) : ticksToUs(raw.readUInt32LE(ticksAt));
  };
  const chance = (type: number): number => {
    const value = a.get(type);
    return value !== undefined && value.length >= 4 ? readPercent(value.readUInt32LE(0)) : 0;
  };
  const out: NetemOptions = {
    delay: ns(T.TCA_NETEM_LATENCY64, 0),
    jitter: ns(T.TCA_NETEM_JITTER64, 20),
    loss: readPercent(raw.readUInt32LE(8)),
    duplicate: readPercent(raw.readUInt32LE(16)),
    corrupt: chance(T.TCA_NETEM_CORRUPT),
    reorder: chance(T.TCA_NETEM_REORDER),
    limit: raw.readUInt32LE(4),
  };
  const rate64 = a.get(T.TCA_NETEM_RATE64);
  const rate = rate64 !== undefined && rate64.length >= 8 ? Number(rate64.readBigUInt64LE(0)) : a.u32(T.TCA_NETEM_RATE);
  if (rate !== undefined && rate > 0) out.rate = rate;
  return out;
}

/** pfifo: tc_fifo_qopt { u32 limit } as the options themselves; nothing when no limit is given (the kernel takes the link's txqueuelen). */
export function pfifoOptions(spec: { limit?: unknown }): Attribute[] {
  return spec.limit === undefined ? [] : [attr.u32(T.TCA_OPTIONS, checkUint(spec.limit, 'pfifo limit (packets)'))];
}

export function parsePfifo(raw: Buffer): PfifoOptions | undefined {
  return raw.length < 4 ? undefined : { limit: raw.readUInt32LE(0) };
}
