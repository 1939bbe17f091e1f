// The reader of a capture's TPACKET_V3 ring (packet_capture.h): a thread of
// its own (own_thread.h), never switched, that waits for the blocks the kernel
// hands over, writes each block's packets to the pcap file as records, and
// gives the block back. Nothing here needs a namespace: the socket keeps the
// one it was made in.
//
// Order: the kernel fills the blocks in ring order and a block's packets in
// the order it took them, but it stamps a packet before it takes it, on
// whichever CPU the packet passed, so two CPUs can put a later stamp first
// (by microseconds). A block's records are written sorted by their stamps; a
// packet stamped before the last one already written (the previous block's)
// is written with that time instead, so a file's times never go backwards.
#pragma once
#include <napi.h>

#include "unique_fd.h"

namespace netns {

// Takes the packet socket (closed when done, or at once if this throws) and
// maps its ring; writes records to `file` (still the caller's, written from
// its current offset on) until stopped. Returns { done, stop, written }:
// stop() seals the socket (SealPacketSocket) and returns its { packets, drops };
// the thread then writes what the ring holds and settles `done`: { packets }
// written, or the first failure (a write's: ENOSPC...; nothing is written
// after it). stop() again has no effect. written(): packets written so far.
// A capture whose functions are collected, or whose environment ends, stops.
Napi::Value StartPacketCapture(Napi::Env env, UniqueFd socket, int file);

}  // namespace netns
