/**
 * Fixtures for root-run integration tests: test networks, labs, packet
 * capture, a rootless sandbox, thread capabilities, and in-memory stand-ins
 * (an address-set backend, a manual clock).
 *
 * Guide: [Test networks and labs](../docs/testing.md).
 *
 * @module netns/testing
 */
export { createTestNetwork } from './testing/network.js';
export type { TestHostSpec, TestLinkSpec, TestNetwork, TestNetworkSpec } from './testing/network.js';
export { sweep } from './testing/sweep.js';
export { createLab, Lab } from './testing/lab/lab.js';
export type { ConnectivityOptions, LabImpairment, LabOptions, LabState } from './testing/lab/lab.js';
export type { LabHostSpec, LabLinkOptions, LabLinkSpec, LabNatSpec, LabNodeKind, LabRouterSpec, LabSpec, LabSwitchSpec } from './testing/lab/spec.js';
export type { LabNodeDirs } from './testing/lab/private-dirs.js';
export type { PlannedNat } from './testing/lab/nat-plan.js';
export type { FrrDaemon, LabFrrSpec, LabOspfSpec } from './testing/lab/frr-spec.js';
export type { WaitOptions } from './testing/lab/converge.js';
export type { LabPlan, PlannedEnd, PlannedLink, PlannedRoute, Segment } from './testing/lab/plan.js';
export type { LabPartition } from './testing/lab/partition.js';
export type { ConnectivityMatrix } from './testing/lab/matrix.js';
export type { Impairment } from './testing/lab/units.js';
export { hasEffectiveCapability } from './capabilities.js';
export type { CapabilityName } from './capabilities.js';
export { dropThreadCapability, threadNetns } from './testing/thread.js';
export { MemoryBackend } from './addrset/memory-backend.js';
export { ManualClock } from './testing/manual-clock.js';
export { capturePackets } from './testing/capture.js';
export type { CaptureOptions, CaptureSummary, PacketCapture } from './testing/capture.js';
export { spawnSandbox } from './sandbox/spawn-sandbox.js';
export type { SandboxSpawnOptions } from './sandbox/spawn-sandbox.js';
