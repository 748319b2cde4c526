package main

// Op "gopatch": applies go-patch v0.2.0 ops to the YAML form of a document, as upstream applies
// ResourceSyncRule overrides: the document is decoded like an unstructured object (integers
// int64), round-tripped through gopkg.in/yaml.v2 (maps become map[interface{}]interface{}), and
// the ops are built by patch.NewOpsFromDefinitions. An op's "value" key, when present (even
// null), becomes OpDefinition.Value.
//
// Request: {"op":"gopatch","doc":<any JSON>,"ops":[{"type":"replace","path":"/a","value":1},...]}
// Result:  the patched document as JSON (map keys printed with %v).

import (
	"encoding/json"
	"fmt"

	"github.com/cppforlife/go-patch/patch"
	"gopkg.in/yaml.v2"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func init() { handlers["gopatch"] = gopatchOp }

func gopatchOp(line json.RawMessage) (any, error) {
	var req struct {
		Doc json.RawMessage              `json:"doc"`
		Ops []map[string]json.RawMessage `json:"ops"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	doc, err := gopatchYAMLForm(req.Doc)
	if err != nil {
		return nil, err
	}
	defs := make([]patch.OpDefinition, len(req.Ops))
	for i, raw := range req.Ops {
		if t, ok := raw["type"]; ok {
			if err := json.Unmarshal(t, &defs[i].Type); err != nil {
				return nil, err
			}
		}
		if p, ok := raw["path"]; ok {
			var path string
			if err := json.Unmarshal(p, &path); err != nil {
				return nil, err
			}
			defs[i].Path = &path
		}
		if v, ok := raw["value"]; ok {
			var value any
			if err := utiljson.Unmarshal(v, &value); err != nil {
				return nil, err
			}
			defs[i].Value = &value
		}
	}
	ops, err := patch.NewOpsFromDefinitions(defs)
	if err != nil {
		return nil, err
	}
	out, err := ops.Apply(doc)
	if err != nil {
		return nil, err
	}
	return gopatchJSONable(out), nil
}

func gopatchYAMLForm(raw json.RawMessage) (any, error) {
	var obj any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	y, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

func gopatchJSONable(v any) any {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = gopatchJSONable(e)
		}
		return m
	case []interface{}:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = gopatchJSONable(e)
		}
		return a
	default:
		return v
	}
}
