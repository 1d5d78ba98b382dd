// Command loadgen is the client side of benchmarks/bench_apiserver.py: the same HTTP load,
// written in Go so that the client's own cost is small and equal for both servers measured
// (kubectrl's wardle server and k8s.io/sample-apiserver).
//
// It talks HTTPS to one server with a client certificate and runs the commands it reads from
// stdin, one JSON object per line, answering each with one JSON line on stdout; the driver
// reads the server's CPU time around each command. Commands ("op"):
//
//	create  {clients, count, prefix}  create count Flunders named prefix-<i>
//	get     {clients, count}          get Flunders created before, round robin
//	list    {clients, count, limit}   list the namespace's Flunders, one page of limit
//	update  {clients, count}          update Flunders created before (each client its own)
//	watch   {watchers, clients, count, timeout}  open watchers, then update count times and
//	        wait until every watcher has every event (or the timeout, or its watch ends)
//	quit
//
// Every request's latency is recorded; the answer gives requests, errors, seconds and the
// 50th/99th percentiles in microseconds.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

type command struct {
	Op       string  `json:"op"`
	Clients  int     `json:"clients"`
	Count    int     `json:"count"`
	Prefix   string  `json:"prefix"`
	Limit    int     `json:"limit"`
	Watchers int     `json:"watchers"`
	Timeout  float64 `json:"timeout"`
}

type object struct {
	name string
	mu   sync.Mutex
	body map[string]any
}

type runner struct {
	base      string
	namespace string
	http      *http.Client
	mu        sync.Mutex
	objects   []*object
}

const sentAnnotation = "bench-sent"

func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func (r *runner) collection() string {
	return r.base + "/apis/wardle.example.com/v1alpha1/namespaces/" + r.namespace + "/flunders"
}

func (r *runner) do(method, url string, body []byte) (int, []byte, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, reader)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// phase runs count requests over clients goroutines; request(client, i) does the i-th.
func phase(clients, count int, request func(client, i int) error) map[string]any {
	if clients < 1 {
		clients = 1
	}
	latencies := make([][]int64, clients)
	var errs atomic.Int64
	var firstErr atomic.Value
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				t0 := time.Now()
				err := request(c, i)
				latencies[c] = append(latencies[c], time.Since(t0).Microseconds())
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}(c)
	}
	wg.Wait()
	seconds := time.Since(start).Seconds()
	all := []int64{}
	for _, l := range latencies {
		all = append(all, l...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	out := map[string]any{
		"requests": count, "errors": errs.Load(), "seconds": seconds,
		"p50_us": percentile(all, 0.50), "p99_us": percentile(all, 0.99),
	}
	if e := firstErr.Load(); e != nil {
		out["first_error"] = e
	}
	return out
}

func (r *runner) create(cmd command) map[string]any {
	made := make([]*object, cmd.Count)
	result := phase(cmd.Clients, cmd.Count, func(_, i int) error {
		name := fmt.Sprintf("%s-%d", cmd.Prefix, i)
		body, _ := json.Marshal(map[string]any{
			"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
			"metadata": map[string]any{"name": name, "namespace": r.namespace,
				"labels": map[string]string{"bench": "apiserver", "client": cmd.Prefix}},
			"spec": map[string]any{"reference": "fischer-" + strconv.Itoa(i%7), "referenceType": "Fischer"},
		})
		status, data, err := r.do("POST", r.collection(), body)
		if err != nil {
			return err
		}
		if status != 201 {
			return fmt.Errorf("create %s: %d %s", name, status, trim(data))
		}
		stored := map[string]any{}
		if err := json.Unmarshal(data, &stored); err != nil {
			return err
		}
		made[i] = &object{name: name, body: stored}
		return nil
	})
	r.mu.Lock()
	for _, o := range made {
		if o != nil {
			r.objects = append(r.objects, o)
		}
	}
	result["stored"] = len(r.objects)
	r.mu.Unlock()
	return result
}

func trim(data []byte) string {
	if len(data) > 300 {
		data = data[:300]
	}
	return string(data)
}

func (r *runner) get(cmd command) map[string]any {
	return phase(cmd.Clients, cmd.Count, func(_, i int) error {
		o := r.objects[(i*7919)%len(r.objects)]
		status, data, err := r.do("GET", r.collection()+"/"+o.name, nil)
		if err != nil {
			return err
		}
		if status != 200 {
			return fmt.Errorf("get %s: %d %s", o.name, status, trim(data))
		}
		return nil
	})
}

func (r *runner) list(cmd command) map[string]any {
	url := r.collection() + "?limit=" + strconv.Itoa(cmd.Limit)
	var items atomic.Int64
	result := phase(cmd.Clients, cmd.Count, func(_, i int) error {
		status, data, err := r.do("GET", url, nil)
		if err != nil {
			return err
		}
		if status != 200 {
			return fmt.Errorf("list: %d %s", status, trim(data))
		}
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return err
		}
		items.Add(int64(len(page.Items)))
		return nil
	})
	result["items_per_page"] = float64(items.Load()) / float64(max(cmd.Count, 1))
	return result
}

// update: client c updates the objects c, c+clients, ... in turn, so no two clients write one
// object; each PUT carries the resourceVersion of the client's last answer (no conflicts).
func (r *runner) update(cmd command) map[string]any {
	clients := max(cmd.Clients, 1)
	turns := make([]int, clients)
	return phase(clients, cmd.Count, func(c, _ int) error {
		mine := (len(r.objects) - c + clients - 1) / clients
		if mine == 0 {
			return fmt.Errorf("update: client %d has no object", c)
		}
		o := r.objects[c+clients*(turns[c]%mine)]
		turns[c]++
		o.mu.Lock()
		defer o.mu.Unlock()
		meta := o.body["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
			meta["annotations"] = annotations
		}
		annotations[sentAnnotation] = strconv.FormatInt(time.Now().UnixNano(), 10)
		body, _ := json.Marshal(o.body)
		status, data, err := r.do("PUT", r.collection()+"/"+o.name, body)
		if err != nil {
			return err
		}
		if status != 200 {
			return fmt.Errorf("update %s: %d %s", o.name, status, trim(data))
		}
		stored := map[string]any{}
		if err := json.Unmarshal(data, &stored); err != nil {
			return err
		}
		o.body = stored
		return nil
	})
}

type watcher struct {
	received atomic.Int64
	ended    atomic.Bool
	lags     []int64
	err      string
}

var sentKey = []byte(`"` + sentAnnotation + `":"`)

func (r *runner) watch(cmd command) map[string]any {
	status, data, err := r.do("GET", r.collection()+"?limit=1", nil)
	if err != nil || status != 200 {
		return map[string]any{"error": fmt.Sprintf("list before watch: %v %d %s", err, status, trim(data))}
	}
	var page struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &page)
	url := r.collection() + "?watch=true&resourceVersion=" + page.Metadata.ResourceVersion
	watchers := make([]*watcher, cmd.Watchers)
	bodies := make([]io.ReadCloser, cmd.Watchers)
	streamClient := &http.Client{Transport: r.http.Transport}
	for i := range watchers {
		w := &watcher{}
		watchers[i] = w
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := streamClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			return map[string]any{"error": fmt.Sprintf("watch %d: %v", i, err)}
		}
		bodies[i] = resp.Body
		go func() {
			defer w.ended.Store(true)
			scanner := bufio.NewScanner(resp.Body)
			scanner.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
			for scanner.Scan() {
				now := time.Now().UnixNano()
				line := scanner.Bytes()
				if bytes.Contains(line, []byte(`"type":"BOOKMARK"`)) {
					continue
				}
				if k := bytes.Index(line, sentKey); k >= 0 {
					rest := line[k+len(sentKey):]
					if end := bytes.IndexByte(rest, '"'); end > 0 {
						if sent, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil {
							w.lags = append(w.lags, (now-sent)/1000)
						}
					}
				}
				w.received.Add(1)
			}
			if err := scanner.Err(); err != nil {
				w.err = err.Error()
			}
		}()
	}
	result := r.update(command{Clients: cmd.Clients, Count: cmd.Count})
	lastWrite := time.Now()
	deadline := lastWrite.Add(time.Duration(cmd.Timeout * float64(time.Second)))
	for time.Now().Before(deadline) {
		done := true
		for _, w := range watchers {
			if w.received.Load() < int64(cmd.Count) && !w.ended.Load() {
				done = false
				break
			}
		}
		if done {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	caughtUp := time.Since(lastWrite).Seconds()
	ended := 0
	for _, w := range watchers {
		if w.ended.Load() {
			ended++
		}
	}
	// Closing the bodies ends the readers; wait for them before reading their lags.
	for _, b := range bodies {
		b.Close()
	}
	for _, w := range watchers {
		for !w.ended.Load() {
			time.Sleep(time.Millisecond)
		}
	}
	minimum, total, behind := int64(-1), int64(0), 0
	all := []int64{}
	for _, w := range watchers {
		n := w.received.Load()
		total += n
		if minimum < 0 || n < minimum {
			minimum = n
		}
		if n < int64(cmd.Count) {
			behind++
		}
		all = append(all, w.lags...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	result["watchers"] = cmd.Watchers
	result["events_sent"] = cmd.Count
	result["events_received_min"] = minimum
	result["events_received_total"] = total
	result["watchers_behind"] = behind
	result["watchers_ended_early"] = ended
	result["seconds_to_catch_up"] = caughtUp
	result["lag_p50_us"] = percentile(all, 0.50)
	result["lag_p99_us"] = percentile(all, 0.99)
	return result
}

func main() {
	server := flag.String("server", "", "https://host:port of the API server")
	certFile := flag.String("cert", "", "client certificate (PEM)")
	keyFile := flag.String("key", "", "client key (PEM)")
	namespace := flag.String("namespace", "bench", "namespace of the Flunders")
	flag.Parse()
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	transport := &http.Transport{
		// Both servers serve a self-signed certificate; the loop is loopback only.
		TLSClientConfig:     &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true}, //nolint:gosec
		MaxIdleConnsPerHost: 256,
		MaxConnsPerHost:     0,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	r := &runner{base: *server, namespace: *namespace,
		http: &http.Client{Transport: transport, Timeout: 120 * time.Second}}
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var cmd command
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			_ = out.Encode(map[string]any{"error": err.Error()})
			continue
		}
		var result map[string]any
		switch cmd.Op {
		case "create":
			result = r.create(cmd)
		case "get":
			result = r.get(cmd)
		case "list":
			result = r.list(cmd)
		case "update":
			result = r.update(cmd)
		case "watch":
			result = r.watch(cmd)
		case "quit":
			return
		default:
			result = map[string]any{"error": "unknown op " + strconv.Quote(cmd.Op)}
		}
		_ = out.Encode(result)
	}
}
