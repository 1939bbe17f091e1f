// Baseline: vishvananda/netlink, the Go library the netlink API is measured
// against (issue 12, "Speed"). Handles are bound to the namespaces with
// NewHandleAt, so no thread switches namespace while timing. Three scenarios,
// each a median in microseconds:
//
//  1. address add + delete: 10.99.x.y/32 on lo in namespace A, one add and
//     one delete per sample;
//  2. the ptp sequence: veth created in A with its peer placed in B, both ends
//     up, 10.200.0.1/32 on A's end and 10.200.0.2/32 on B's, a default route
//     in B via 10.200.0.1 (onlink), a host route in A to 10.200.0.2/32 (scope
//     link). Deleting the veth afterwards is timed apart;
//  3. a dump of the IPv4 main table of A holding 10,000 /32 routes on lo
//     (10.100.0.0/16), installed before and removed after, neither timed.
//
// Prints one JSON line. Leaves nothing behind in either namespace.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func median(values []float64) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[mid]
	}
	return (sorted[mid-1] + sorted[mid]) / 2
}

func sinceUs(start time.Time) float64 {
	return float64(time.Since(start).Nanoseconds()) / 1000
}

// undo removes, best effort, what a failed run left in the namespaces, so the
// caller can go on using them.
var undo []func()

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-netlink: %s: %v\n", what, err)
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		os.Exit(1)
	}
}

func hostNet(a, b, c, d byte) *net.IPNet {
	return &net.IPNet{IP: net.IPv4(a, b, c, d).To4(), Mask: net.CIDRMask(32, 32)}
}

func addrAddDel(h *netlink.Handle, n int) float64 {
	lo, err := h.LinkByName("lo")
	must(err, "lo")
	samples := make([]float64, n)
	for i := 0; i < n; i++ {
		addr := &netlink.Addr{IPNet: hostNet(10, 99, byte(i>>8), byte(i))}
		undo = []func(){func() { _ = h.AddrDel(lo, addr) }}
		start := time.Now()
		must(h.AddrAdd(lo, addr), "address add")
		must(h.AddrDel(lo, addr), "address delete")
		samples[i] = sinceUs(start)
	}
	undo = nil
	return median(samples)
}

const hostEnd, peerEnd = "nlbench-a", "nlbench-b"

// ptpOnce does the whole sequence the way a Go CNI plugin writes it with this
// library: every call below is one request and its acknowledgement, except
// LinkAdd (creation, then a lookup of the new index) and the lookup of the
// peer in B.
func ptpOnce(hA, hB *netlink.Handle, nsB netns.NsHandle) netlink.Link {
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: hostEnd},
		PeerName:      peerEnd,
		PeerNamespace: netlink.NsFd(nsB),
	}
	must(hA.LinkAdd(veth), "veth add")
	must(hA.LinkSetUp(veth), "link up (A)")
	peer, err := hB.LinkByName(peerEnd)
	must(err, "peer lookup (B)")
	must(hB.LinkSetUp(peer), "link up (B)")
	must(hA.AddrAdd(veth, &netlink.Addr{IPNet: hostNet(10, 200, 0, 1)}), "address (A)")
	must(hB.AddrAdd(peer, &netlink.Addr{IPNet: hostNet(10, 200, 0, 2)}), "address (B)")
	must(hB.RouteAdd(&netlink.Route{
		LinkIndex: peer.Attrs().Index,
		Gw:        net.IPv4(10, 200, 0, 1).To4(),
		Flags:     int(netlink.FLAG_ONLINK),
	}), "default route (B)")
	must(hA.RouteAdd(&netlink.Route{
		LinkIndex: veth.Attrs().Index,
		Dst:       hostNet(10, 200, 0, 2),
		Scope:     netlink.SCOPE_LINK,
	}), "host route (A)")
	return veth
}

func ptp(hA, hB *netlink.Handle, nsB netns.NsHandle, n int) (float64, float64) {
	setup := make([]float64, n)
	teardown := make([]float64, n)
	undo = []func(){func() { _ = hA.LinkDel(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hostEnd}}) }}
	defer func() { undo = nil }()
	for i := 0; i < n; i++ {
		start := time.Now()
		veth := ptpOnce(hA, hB, nsB)
		setup[i] = sinceUs(start)
		start = time.Now()
		must(hA.LinkDel(veth), "veth delete")
		teardown[i] = sinceUs(start)
	}
	return median(setup), median(teardown)
}

func routeDump(h *netlink.Handle, count, n int) (float64, int, float64) {
	lo, err := h.LinkByName("lo")
	must(err, "lo")
	routes := make([]*netlink.Route, count)
	undo = []func(){func() {
		for _, route := range routes {
			if route != nil {
				_ = h.RouteDel(route)
			}
		}
	}}
	defer func() { undo = nil }()
	start := time.Now()
	for i := range routes {
		route := &netlink.Route{
			LinkIndex: lo.Attrs().Index,
			Dst:       hostNet(10, 100, byte(i>>8), byte(i)),
			Scope:     netlink.SCOPE_LINK,
		}
		must(h.RouteAdd(route), "route add")
		routes[i] = route
	}
	installUs := sinceUs(start)
	samples := make([]float64, n)
	seen := 0
	for i := 0; i < n; i++ {
		start := time.Now()
		list, err := h.RouteList(nil, netlink.FAMILY_V4)
		samples[i] = sinceUs(start)
		must(err, "route dump")
		seen = len(list)
	}
	for _, route := range routes {
		must(h.RouteDel(route), "route delete")
	}
	return median(samples), seen, installUs
}

func main() {
	pathA := flag.String("a", "", "path of namespace A (e.g. /run/netns/NAME)")
	pathB := flag.String("b", "", "path of namespace B (peer side of the ptp sequence)")
	addrRuns := flag.Int("addr", 1000, "address add+delete pairs")
	ptpRuns := flag.Int("ptp", 200, "ptp sequences")
	routeCount := flag.Int("routes", 10000, "routes installed for the dump (at most 65536)")
	dumpRuns := flag.Int("dumps", 50, "route dumps")
	flag.Parse()
	if *pathA == "" || *pathB == "" || *addrRuns < 1 || *ptpRuns < 1 || *dumpRuns < 1 || *routeCount > 65536 {
		fmt.Fprintln(os.Stderr, "usage: go-netlink -a NETNS_PATH -b NETNS_PATH [-addr N] [-ptp N] [-routes N] [-dumps N]")
		os.Exit(2)
	}
	nsA, err := netns.GetFromPath(*pathA)
	must(err, *pathA)
	nsB, err := netns.GetFromPath(*pathB)
	must(err, *pathB)
	hA, err := netlink.NewHandleAt(nsA, unix.NETLINK_ROUTE)
	must(err, "handle in A")
	hB, err := netlink.NewHandleAt(nsB, unix.NETLINK_ROUTE)
	must(err, "handle in B")

	addrUs := addrAddDel(hA, *addrRuns)
	ptpUs, ptpDeleteUs := ptp(hA, hB, nsB, *ptpRuns)
	dumpUs, dumped, installUs := routeDump(hA, *routeCount, *dumpRuns)

	result := map[string]interface{}{
		"addrAddDelUs":           addrUs,
		"ptpUs":                  ptpUs,
		"ptpDeleteUs":            ptpDeleteUs,
		"routeDumpUs":            dumpUs,
		"routesDumped":           dumped,
		"routeInstallOneByOneUs": installUs,
		"runs":                   map[string]int{"addr": *addrRuns, "ptp": *ptpRuns, "dumps": *dumpRuns, "routes": *routeCount},
	}
	_ = json.NewEncoder(os.Stdout).Encode(result)
}
