// Client limits for k8s.io/sample-controller in kubectrl's benchmark.
//
// benchmarks/_gobuild.py builds upstream's package main (main.go and controller.go as
// published) from a temporary copy of the module with this file added, and with two lines of
// upstream's main.go edited to read these flags: the rest config's QPS and burst are set just
// before the clientsets are made, and the worker count replaces the literal 2 given to Run.
// Without the flags the program behaves as upstream's: client-go's default limits (QPS 5,
// burst 10) and 2 workers.
package main

import "flag"

var (
	benchQPS     = flag.Float64("qps", 5, "client-side QPS limit (client-go's default: 5)")
	benchBurst   = flag.Int("burst", 10, "client-side burst (client-go's default: 10)")
	benchWorkers = flag.Int("workers", 2, "Foos reconciled at once (upstream runs 2)")
)
