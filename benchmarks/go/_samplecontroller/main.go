// kubectrl's entry point for k8s.io/sample-controller in the benchmark. benchmarks/_gobuild.py
// builds the upstream package from a temporary copy of the module with this file in place of
// its main.go, so the controller itself (controller.go: NewController, Run) is upstream's,
// unchanged. What this file adds: client limits and the worker count as flags, so that the Go
// controller and kubectrl's run at the same QPS, burst and concurrency.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	appsinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/sample-controller/pkg/signals"

	fooclient "k8s.io/sample-controller/pkg/generated/clientset/versioned"
	fooinformers "k8s.io/sample-controller/pkg/generated/informers/externalversions"
)

type options struct {
	kubeconfig string
	qps        float64
	burst      int
	workers    int
	resync     time.Duration
}

func run(opts options) error {
	ctx := signals.SetupSignalHandler()
	restConfig, err := clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %q: %w", opts.kubeconfig, err)
	}
	restConfig.QPS, restConfig.Burst = float32(opts.qps), opts.burst

	kube, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	foos, err := fooclient.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("Foo clientset: %w", err)
	}
	deploymentInformers := appsinformers.NewSharedInformerFactory(kube, opts.resync)
	fooInformers := fooinformers.NewSharedInformerFactory(foos, opts.resync)
	ctrl := NewController(ctx, kube, foos,
		deploymentInformers.Apps().V1().Deployments(),
		fooInformers.Samplecontroller().V1alpha1().Foos())
	deploymentInformers.Start(ctx.Done())
	fooInformers.Start(ctx.Done())
	return ctrl.Run(ctx, opts.workers)
}

func main() {
	var opts options
	flag.StringVar(&opts.kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster")
	flag.Float64Var(&opts.qps, "qps", 1000, "client-side QPS limit")
	flag.IntVar(&opts.burst, "burst", 1000, "client-side burst")
	flag.IntVar(&opts.workers, "workers", 2, "Foos reconciled at once")
	flag.DurationVar(&opts.resync, "resync", 30*time.Second, "informer resync period")
	klog.InitFlags(nil)
	flag.Parse()
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "sample-controller:", err)
		os.Exit(1)
	}
}
