// The arithmetic tc does before it sends a rate or a time (iproute2
// tc/tc_core.c, lib/utils.c get_hz, tc/q_netem.c set_percent), repeated here
// step for step, truncations included, so that what is sent equals what `tc`
// sends byte for byte.
//
// The kernel's scheduler clock: times go in "ticks", and how many ticks make a
// microsecond is what /proc/net/psched says (net/sched/sch_api.c psched_show:
// NSEC_PER_USEC, PSCHED_TICKS2NS(1), 1000000, NSEC_PER_SEC / hrtimer_resolution).
// tc reads it on every run; so does this file, once. The kernel prints the same
// first three numbers on every build since 2.6.31 (15.625 ticks per µs); the
// fourth, the clock's resolution, is what tc takes as HZ for htb's default bursts.
import { readFileSync } from 'node:fs';
import { RATE_TABLE_SIZE, TC_LINKLAYER_ETHERNET, TC_RATESPEC_SIZE } from './tc-constants.js';

const TIME_UNITS_PER_SEC = 1_000_000;
const UINT32_MAX = 0xffffffff;

interface Psched {
  /** Scheduler ticks per microsecond (tc's tick_in_usec). */
  ticksPerUsec: number;
  /** What tc's get_hz() answers: the clock's resolution per second. */
  hz: number;
}

let psched: Psched | undefined;

/** /proc/net/psched, read once, as tc_core_init() and get_hz() read it (the fixed kernel numbers if it cannot be read). */
function schedulerClock(): Psched {
  psched ??= parsePsched(readPsched());
  return psched;
}

function readPsched(): string {
  try {
    return readFileSync('/proc/net/psched', 'latin1');
  } catch {
    return '000003e8 00000040 000f4240 3b9aca00';
  }
}

/** tc_core_init: a nanosecond clock (clock_res 10^9) says 1000 ticks to the microsecond for old tcs' sake and means 1. */
export function parsePsched(text: string): Psched {
  const [t2us0, us2t, clockRes, resolution] = text.trim().split(/\s+/).map((word) => parseInt(word, 16));
  const t2us = clockRes === 1_000_000_000 ? us2t! : t2us0!;
  const clockFactor = clockRes! / TIME_UNITS_PER_SEC;
  return { ticksPerUsec: (t2us / us2t!) * clockFactor, hz: clockRes === 1_000_000 && resolution! > 0 ? resolution! : 100 };
}

/** A C conversion of a double to an unsigned int, for the values tc converts (checked to fit first). */
const u32 = (n: number): number => Math.trunc(n) >>> 0;

/** tc_core_time2tick: microseconds to ticks; undefined when they do not fit in 32 bits (tc_core_time2big). */
export function usToTicks(us: number): number | undefined {
  const ticks = Math.trunc(u32(us) * schedulerClock().ticksPerUsec);
  return ticks > UINT32_MAX ? undefined : ticks;
}

/** tc_core_tick2time: ticks to whole microseconds. */
export function ticksToUs(ticks: number): number {
  return Math.trunc(ticks / schedulerClock().ticksPerUsec);
}

/** tc_calc_xmittime: the ticks `size` bytes take at `rate` bytes per second; undefined when over 32 bits. */
export function transmitTicks(rate: number, size: number): number | undefined {
  const us = TIME_UNITS_PER_SEC * (size / rate);
  return us > UINT32_MAX ? undefined : usToTicks(us);
}

/** tc_calc_xmitsize: the bytes sent at `rate` in `ticks`, as tc prints a burst back. */
export function transmitSize(rate: number, ticks: number): number {
  return Math.trunc((rate * ticksToUs(ticks)) / TIME_UNITS_PER_SEC);
}

/** get_hz(): what htb's default burst divides a rate by. */
export function clockHz(): number {
  return schedulerClock().hz;
}

/** What a u32 rate field holds: the rate, or ~0 when it needs the 64-bit attribute. */
export function rate32(rate: number): number {
  return rate >= 2 ** 32 ? UINT32_MAX : rate;
}

/**
 * tc_calc_rtable for an Ethernet link with no mpu or overhead: the cell size
 * from `mtu` (2047 if 0), then 256 transmit times of (i + 1) << cell_log
 * bytes at the u32 `rate`. Returns the table and the tc_ratespec to send with it.
 */
export function rateTable(rate: number, mtu: number): { table: Buffer; spec: Buffer } {
  let cellLog = 0;
  while ((mtu || 2047) >> cellLog > 255) cellLog++;
  const r = rate32(rate);
  const table = Buffer.alloc(RATE_TABLE_SIZE);
  for (let i = 0; i < 256; i++) table.writeUInt32LE(tableTicks(r, (i + 1) << cellLog), i * 4);
  return { table, spec: ratespec(r, cellLog) };
}

/** A table entry: a time over 32 bits (a few bytes per second) wraps, as tc's C conversion wraps it on x86-64; the kernel reads only the table's link layer now. */
function tableTicks(rate: number, size: number): number {
  return u32(u32(TIME_UNITS_PER_SEC * (size / rate)) * schedulerClock().ticksPerUsec);
}

/** struct tc_ratespec: u8 cell_log, u8 linklayer, u16 overhead, s16 cell_align (-1, as tc_calc_rtable sets it), u16 mpu, u32 rate. */
function ratespec(rate: number, cellLog: number): Buffer {
  const out = Buffer.alloc(TC_RATESPEC_SIZE);
  out.writeUInt8(cellLog, 0);
  out.writeUInt8(TC_LINKLAYER_ETHERNET, 1);
  out.writeInt16LE(-1, 4);
  out.writeUInt32LE(rate, 8);
  return out;
}

/** netem's set_percent: a percentage as a fraction of 2^32 - 1, rounded as rint() rounds (half to even). */
export function percentToU32(percent: number): number {
  const scaled = (percent / 100) * UINT32_MAX;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  if (diff > 0.5 || (diff === 0.5 && floor % 2 === 1)) return floor + 1;
  return floor;
}

/** The percentage a netem probability stands for. */
export function u32ToPercent(value: number): number {
  return (value / UINT32_MAX) * 100;
}
