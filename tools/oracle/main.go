// Command oracle runs the real Go libraries the upstream controller uses (text/template with
// sprig v2.22.0, gjson v1.9.3, go-patch v0.2.0, apimachinery label selectors, the typed objects
// of client-go's scheme and clusterregistry v1alpha1) on inputs given as JSON lines, so the
// TypeScript implementations can be tested differentially against them. It also generates the
// type model the TypeScript data model is built from (op "typemodel").
// It is test infrastructure only and is never shipped.
//
// Protocol: one request per stdin line, {"op": "<name>", ...op fields}; one response per
// stdout line, {"ok": true, "result": ...} or {"ok": false, "error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// handlers maps an op name to its implementation; each op's file registers itself in init().
var handlers = map[string]func(req json.RawMessage) (any, error){}

type response struct {
	OK     bool   `json:"ok"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		enc.Encode(handle(in.Bytes()))
		out.Flush()
	}
}

func handle(line []byte) (resp response) {
	defer func() {
		if r := recover(); r != nil {
			resp = response{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	var head struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return response{Error: "bad request: " + err.Error()}
	}
	h, ok := handlers[head.Op]
	if !ok {
		return response{Error: "unknown op " + head.Op}
	}
	result, err := h(line)
	if err != nil {
		return response{Error: err.Error()}
	}
	return response{OK: true, Result: result}
}
