// `netns/testing`: fixtures for root-run integration tests.
export { createTestNetwork } from './testing/network.js';
export type { TestHostSpec, TestLinkSpec, TestNetwork, TestNetworkSpec } from './testing/network.js';
export { sweep } from './testing/sweep.js';
export { hasEffectiveCapability } from './capabilities.js';
export type { CapabilityName } from './capabilities.js';
export { dropThreadCapability, threadNetns } from './testing/thread.js';
export { MemoryBackend } from './addrset/memory-backend.js';
export { ManualClock } from './testing/manual-clock.js';
export { capturePackets } from './testing/capture.js';
export type { CaptureOptions, CaptureSummary, PacketCapture } from './testing/capture.js';
