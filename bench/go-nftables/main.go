// Baseline: Go's google/nftables (Debian's 0.1.0) filling one interval set of
// ipv4_addr with N addresses in one batch (issue 13, "Speed"), in the
// namespace given by path, as bench/addrset.js fills its own: the addresses
// parsed from text, a start and an END (exclusive) element each, one Flush.
// Timed from the first address parsed to Flush's return; the table is made
// before and deleted after, untimed. Prints one JSON line: { "fillUs": ... }.
//
// Two things 0.1.0 does not do, done here as the upstream fixes and nft do:
//   - it puts every element of a SetAddElements call in one message, and the
//     ELEMENTS nest's u16 length wraps past 65535 bytes (the kernel then keeps
//     a part, silently): elements go in calls of at most chunk elements;
//   - it sends the batch on a socket with the default send buffer, and a
//     batch past ~208 KiB fails with EMSGSIZE: the lasting connection's send
//     buffer is forced to fit (SO_SNDBUFFORCE), reaching the unexported
//     socket by reflection since 0.1.0 offers no option for it.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"reflect"
	"time"
	"unsafe"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// A start's element nest is 16 bytes, an END's 24: 1,500 pairs (60,000 bytes) stay under 65535.
const chunk = 3000

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func forceSendBuffer(conn *nftables.Conn, bytes int) error {
	field := reflect.ValueOf(conn).Elem().FieldByName("nlconn")
	nl := *(**netlink.Conn)(unsafe.Pointer(field.UnsafeAddr()))
	raw, err := nl.SyscallConn()
	if err != nil {
		return err
	}
	var sockErr error
	if err := raw.Control(func(fd uintptr) { sockErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, bytes) }); err != nil {
		return err
	}
	return sockErr
}

func main() {
	nsPath := flag.String("ns", "", "network namespace path")
	count := flag.Int("n", 100000, "addresses")
	table := flag.String("table", "gofill", "table name")
	flag.Parse()
	ns, err := unix.Open(*nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fail("open %s: %v", *nsPath, err)
	}
	conn, err := nftables.New(nftables.WithNetNSFd(ns), nftables.AsLasting())
	if err != nil {
		fail("nftables.New: %v", err)
	}
	defer conn.CloseLasting()
	texts := make([]string, *count)
	for i := range texts {
		texts[i] = fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
	}
	t := conn.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: *table})
	set := &nftables.Set{Table: t, Name: "s", KeyType: nftables.TypeIPAddr, Interval: true}
	if err := conn.AddSet(set, nil); err != nil {
		fail("AddSet: %v", err)
	}
	if err := conn.Flush(); err != nil {
		fail("add table and set: %v", err)
	}
	// 40 bytes an address on the wire, and the batch's framing: twice that is ample.
	if err := forceSendBuffer(conn, *count*80+65536); err != nil {
		fail("SO_SNDBUFFORCE: %v", err)
	}

	start := time.Now()
	elements := make([]nftables.SetElement, 0, 2*len(texts))
	for _, text := range texts {
		ip := net.ParseIP(text).To4()
		end := make([]byte, 4)
		binary.BigEndian.PutUint32(end, binary.BigEndian.Uint32(ip)+1)
		elements = append(elements, nftables.SetElement{Key: ip}, nftables.SetElement{Key: end, IntervalEnd: true})
	}
	for first := 0; first < len(elements); first += chunk {
		last := first + chunk
		if last > len(elements) {
			last = len(elements)
		}
		if err := conn.SetAddElements(set, elements[first:last]); err != nil {
			fail("SetAddElements: %v", err)
		}
	}
	if err := conn.Flush(); err != nil {
		fail("fill: %v", err)
	}
	fill := time.Since(start)

	conn.DelTable(t)
	if err := conn.Flush(); err != nil {
		fail("delete table: %v", err)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"fillUs": float64(fill.Nanoseconds()) / 1e3, "count": *count})
}
