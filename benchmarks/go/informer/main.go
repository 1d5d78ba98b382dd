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
// and reads nothing from stdin; the driver writes the updates. With -replay-from RV it runs
// no informer: it watches the namespace's ConfigMaps from resourceVersion RV, which the
// apiserver answers from its watch cache, and prints
//
//	{"phase":"replayed", ...} after -events replayed events were decoded (CPU of that alone)
package main

import (
	"context"
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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
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

// sysSeconds is the kernel's share of cpuSeconds (page faults, mostly, in a sync).
func sysSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return -1
	}
	return float64(usage.Stime.Nano()) / 1e9
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
	replayFrom := flag.String("replay-from", "", "watch from this resourceVersion and time -events replayed events (no informer)")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg.QPS = float32(*qps)
	cfg.Burst = int(*qps)
	client := kubernetes.NewForConfigOrDie(cfg)
	if *replayFrom != "" {
		replay(client, *namespace, *replayFrom, *events)
		return
	}

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

	cpu0, sys0 := cpuSeconds(), sysSeconds()
	started := time.Now()
	factory.Start(stop)
	// Not cache.WaitForCacheSync: it looks at HasSynced every 100 ms (syncedPollPeriod in
	// client-go's tools/cache/shared_informer.go), which would add up to 100 ms to the wall
	// time measured here. Every millisecond instead (the Python peers are told at once).
	for !informer.HasSynced() {
		select {
		case <-stop:
			fmt.Fprintln(os.Stderr, "cache did not sync")
			os.Exit(1)
		case <-time.After(time.Millisecond):
		}
	}
	wall := time.Since(started).Seconds()
	count := len(informer.GetStore().ListKeys())
	cpu, system := cpuSeconds()-cpu0, sysSeconds()-sys0
	rss := rssKiB()
	emit(map[string]any{
		"phase": "synced", "objects": count, "expected": *expect, "wall_s": wall,
		"cpu_s": cpu, "sys_s": system, "rss_kib": rss, "baseline_rss_kib": baseline,
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

// replay watches from resourceVersion from and times the decoding of events replayed events:
// the clientset decodes each into a typed ConfigMap, whose key is read as a handler would.
func replay(client kubernetes.Interface, namespace, from string, events int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	runtime.GC()
	cpu0 := cpuSeconds()
	started := time.Now()
	w, err := client.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: from})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	seen := 0
	keys := 0
	for event := range w.ResultChan() {
		if event.Type == watch.Error {
			fmt.Fprintf(os.Stderr, "watch error: %v\n", event.Object)
			os.Exit(1)
		}
		cm, ok := event.Object.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		keys += len(cm.Namespace) + len(cm.Name)
		seen++
		if seen == events {
			break
		}
	}
	cpu := cpuSeconds() - cpu0
	wall := time.Since(started).Seconds()
	w.Stop()
	if seen < events {
		fmt.Fprintf(os.Stderr, "watch ended after %d of %d events\n", seen, events)
		os.Exit(1)
	}
	emit(map[string]any{"phase": "replayed", "events": seen, "cpu_s": cpu, "wall_s": wall, "key_bytes": keys})
}
