package main

// Keeps every reference library pinned in go.mod until the op files import them directly.
import (
	_ "github.com/Masterminds/sprig"
	_ "github.com/cppforlife/go-patch/patch"
	_ "github.com/tidwall/gjson"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	_ "k8s.io/apimachinery/pkg/labels"
)
