package main

// The typed objects upstream works on. Its sync reconciler reads a source object typed when its
// scheme (client-go's kubernetes scheme plus clusterregistry v1alpha1) knows the GVK, else as
// unstructured. A typed object reaches the content matcher and the override templates the way
// controller-runtime v0.9.5 delivers it from the informer cache:
//   - built-in kinds travel as protobuf (apiutil.RESTClientForGVK), other kinds as JSON decoded by
//     apimachinery's case-sensitive json-iterator;
//   - CacheReader.Get/List then set TypeMeta to the GVK asked for.
//
// Op "typedjson": json.Marshal of the object as upstream's matcher sees it.
//   Request: {"op":"typedjson","gvk":{"group":..,"version":..,"kind":..},"object":{...}}
//   Result:  "<json text>"
//
// The "template" op takes the same "gvk" to give .Object its typed value (see template.go).

import (
	"encoding/json"
	"fmt"

	clusterregistryv1alpha1 "github.com/cisco-open/cluster-registry-controller/api/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

var (
	scheme      = runtime.NewScheme()
	protoScheme = runtime.NewScheme()
	jsonIter    = serializerjson.CaseSensitiveJSONIterator()
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterregistryv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	// controller-runtime's apiutil asks for protobuf exactly for client-go's scheme.
	if err := clientgoscheme.AddToScheme(protoScheme); err != nil {
		panic(err)
	}
	handlers["typedjson"] = typedJSONOp
}

type gvkJSON struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func (g gvkJSON) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
}

type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// decodeObject gives the object upstream holds for raw JSON of kind gvk: typed (through the
// informer's wire format) when the scheme knows gvk, unstructured otherwise. TypeMeta is set
// to typeMeta, as the cache reader does.
func decodeObject(raw json.RawMessage, gvk, typeMeta schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := scheme.New(gvk)
	if err != nil {
		m := map[string]interface{}{}
		if err := utiljson.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: m}, nil
	}
	if err := jsonIter.Unmarshal(raw, obj); err != nil {
		return nil, err
	}
	if protoScheme.Recognizes(gvk) {
		msg, ok := obj.(protoMessage)
		if !ok {
			return nil, fmt.Errorf("%T is not a protobuf message", obj)
		}
		data, err := msg.Marshal()
		if err != nil {
			return nil, err
		}
		fresh, _ := scheme.New(gvk)
		if err := fresh.(protoMessage).Unmarshal(data); err != nil {
			return nil, err
		}
		obj = fresh
	}
	obj.GetObjectKind().SetGroupVersionKind(typeMeta)
	return obj, nil
}

func typedJSONOp(line json.RawMessage) (any, error) {
	var req struct {
		GVK    gvkJSON         `json:"gvk"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	obj, err := decodeObject(req.Object, req.GVK.gvk(), req.GVK.gvk())
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return string(out), nil
}
