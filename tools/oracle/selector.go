package main

// Op "selector": evaluates a Kubernetes label selector with apimachinery v0.21.3, either the
// string grammar (labels.Parse) or a LabelSelector object (metav1.LabelSelectorAsSelector,
// where JSON null is the nil selector that matches nothing).
//
// Request: {"op":"selector","selector":"a in (x)","labels":{...}} or
//          {"op":"selector","labelSelector":{...}|null,"labels":{...}}
// Result:  {"matches":bool,"string":"<Selector.String()>"}

import (
	"encoding/json"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func init() { handlers["selector"] = selectorOp }

func selectorOp(line json.RawMessage) (any, error) {
	var req struct {
		Selector      *string               `json:"selector"`
		LabelSelector *metav1.LabelSelector `json:"labelSelector"`
		Labels        map[string]string     `json:"labels"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, err
	}
	var sel labels.Selector
	var err error
	switch {
	case req.Selector != nil:
		sel, err = labels.Parse(*req.Selector)
	case fields["labelSelector"] != nil:
		sel, err = metav1.LabelSelectorAsSelector(req.LabelSelector)
	default:
		return nil, errors.New("selector: need 'selector' or 'labelSelector'")
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"matches": sel.Matches(labels.Set(req.Labels)), "string": sel.String()}, nil
}
