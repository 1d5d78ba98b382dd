// Command informer is the client-go side of kubectrl's comparative benchmark
// (benchmarks/compare.py): a ConfigMap informer in one namespace whose event
// handler adds keys to a rate-limited workqueue drained by one worker, the
// pipeline every controller has.
//
// It prints one JSON line per phase on stdout:
//
//	{"phase":"synced", ...}   after the initial list is in the cache
//	{"phase":"events", ...}   after -events update notifications went through
//
// and reads nothing from stdin; the driver writes the updates.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

func rssKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			fields := strings.Fields(line)
			value, _ := strconv.ParseInt(fields[1], 10, 64)
			return value
		}
	}
	return -1
}

func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return -1
	}
	return float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e9
}

func emit(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "admin kubeconfig")
	namespace := flag.String("namespace", "", "namespace of the ConfigMaps")
	expect := flag.Int("expect", 0, "objects the initial list holds")
	events := flag.Int("events", 0, "update notifications to wait for after the sync (0: exit)")
	qps := flag.Float64("qps", 1000, "client QPS")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg.QPS = float32(*qps)
	cfg.Burst = int(*qps)
	client := kubernetes.NewForConfigOrDie(cfg)

	runtime.GC()
	baseline := rssKiB()
	stop := make(chan struct{})
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	var updates atomic.Int64
	done := make(chan struct{})
	var target int64 = int64(*events)

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(*namespace))
	informer := factory.Core().V1().ConfigMaps().Informer()
	enqueue := func(obj any) {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err == nil {
			queue.Add(key)
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(_, obj any) {
			enqueue(obj)
			if n := updates.Add(1); target > 0 && n == target {
				close(done)
			}
		},
		DeleteFunc: enqueue,
	})
	go wait.Until(func() {
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			_, _, _ = informer.GetIndexer().GetByKey(key)
			queue.Forget(key)
			queue.Done(key)
		}
	}, time.Second, stop)

	cpu0 := cpuSeconds()
	started := time.Now()
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		os.Exit(1)
	}
	wall := time.Since(started).Seconds()
	count := len(informer.GetStore().ListKeys())
	cpu := cpuSeconds() - cpu0
	rss := rssKiB()
	emit(map[string]any{
		"phase": "synced", "objects": count, "expected": *expect, "wall_s": wall,
		"cpu_s": cpu, "rss_kib": rss, "baseline_rss_kib": baseline,
	})
	if *events == 0 {
		return
	}
	cpu0 = cpuSeconds()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		fmt.Fprintln(os.Stderr, "timed out waiting for update events")
		os.Exit(1)
	}
	for queue.Len() > 0 {
		time.Sleep(time.Millisecond)
	}
	cpu = cpuSeconds() - cpu0
	emit(map[string]any{"phase": "events", "events": target, "cpu_s": cpu})
	close(stop)
	queue.ShutDown()
}
