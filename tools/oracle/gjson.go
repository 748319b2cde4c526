package main

// Op "gjson": evaluates a path with tidwall/gjson v1.9.3 the way upstream content matchers do
// (gjson.GetBytes on the marshalled object). Int() travels as a decimal string: int64 does not
// fit a JSON number.
//
// Request: {"op":"gjson","json":"...","path":"..."}
// Result:  {"exists":bool,"int":"<Int()>","string":"<String()>","raw":"<Raw>","type":"<Type>"}
//
// Op "jsonmarshal": json.Marshal of a value decoded the way unstructured objects are (integers
// int64, other numbers float64), i.e. the bytes upstream hands to gjson.
//
// Request: {"op":"jsonmarshal","obj":<any JSON>}
// Result:  "<json text>"

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func init() {
	handlers["gjson"] = gjsonOp
	handlers["jsonmarshal"] = jsonMarshalOp
}

func gjsonOp(line json.RawMessage) (any, error) {
	var req struct {
		JSON string `json:"json"`
		Path string `json:"path"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	res := gjson.GetBytes([]byte(req.JSON), req.Path)
	return map[string]any{
		"exists": res.Exists(),
		"int":    strconv.FormatInt(res.Int(), 10),
		"string": res.String(),
		"raw":    res.Raw,
		"type":   res.Type.String(),
	}, nil
}

func jsonMarshalOp(line json.RawMessage) (any, error) {
	var req struct {
		Obj json.RawMessage `json:"obj"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	var obj any
	if err := utiljson.Unmarshal(req.Obj, &obj); err != nil {
		return nil, err
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return string(out), nil
}
