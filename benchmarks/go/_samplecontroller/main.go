// This file replaces k8s.io/sample-controller's main.go at build time (go build
// -overlay, see benchmarks/_gobuild.py); the rest of the upstream package
// (controller.go: NewController, Run) is built unchanged. It differs from the
// upstream main only by the -qps/-burst/-workers flags, so both controllers of
// the benchmark run at equal client limits.
package main

import (
	"flag"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/sample-controller/pkg/signals"

	clientset "k8s.io/sample-controller/pkg/generated/clientset/versioned"
	informers "k8s.io/sample-controller/pkg/generated/informers/externalversions"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "Path to a kubeconfig.")
	qps := flag.Float64("qps", 1000, "client QPS")
	burst := flag.Int("burst", 1000, "client burst")
	workers := flag.Int("workers", 2, "concurrent reconciles")
	klog.InitFlags(nil)
	flag.Parse()

	ctx := signals.SetupSignalHandler()
	logger := klog.FromContext(ctx)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		logger.Error(err, "Error building kubeconfig")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	cfg.QPS = float32(*qps)
	cfg.Burst = *burst

	kubeClient := kubernetes.NewForConfigOrDie(cfg)
	exampleClient := clientset.NewForConfigOrDie(cfg)
	kubeInformerFactory := kubeinformers.NewSharedInformerFactory(kubeClient, 30*time.Second)
	exampleInformerFactory := informers.NewSharedInformerFactory(exampleClient, 30*time.Second)

	controller := NewController(ctx, kubeClient, exampleClient,
		kubeInformerFactory.Apps().V1().Deployments(),
		exampleInformerFactory.Samplecontroller().V1alpha1().Foos())
	kubeInformerFactory.Start(ctx.Done())
	exampleInformerFactory.Start(ctx.Done())
	if err := controller.Run(ctx, *workers); err != nil {
		logger.Error(err, "Error running controller")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}
