// Baseline: containernetworking/plugins pkg/ns, the Go library this package is
// measured against. Same work as the withNetNS benchmark: ns.Do running a
// trivial function, sequentially and from 8 goroutines, and ns.Do creating a
// socket. Prints one JSON line with microseconds and calls per second.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
)

func median(values []float64) float64 {
	sort.Float64s(values)
	return values[len(values)/2]
}

func sequentialUs(target ns.NetNS, n int, work func() error) float64 {
	samples := make([]float64, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := target.Do(func(ns.NetNS) error { return work() }); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		samples[i] = float64(time.Since(start).Nanoseconds()) / 1000
	}
	return median(samples)
}

func concurrentRate(target ns.NetNS, total, workers int) float64 {
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < total/workers; i++ {
				_ = target.Do(func(ns.NetNS) error { return nil })
			}
		}()
	}
	wg.Wait()
	return float64(total) / time.Since(start).Seconds()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-nsdo NETNS_PATH CALLS")
		os.Exit(2)
	}
	calls, _ := strconv.Atoi(os.Args[2])
	target, err := ns.GetNS(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer target.Close()
	noop := func() error { return nil }
	makeSocket := func() error {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
		if err == nil {
			syscall.Close(fd)
		}
		return err
	}
	result := map[string]float64{
		"sequentialUs": sequentialUs(target, calls, noop),
		"socketUs":     sequentialUs(target, calls, makeSocket),
		"callsPerSec":  concurrentRate(target, calls, 8),
	}
	_ = json.NewEncoder(os.Stdout).Encode(result)
}
