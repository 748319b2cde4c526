package main

// Keeps every reference library pinned in go.mod until the op files import them directly.
import (
	_ "github.com/cppforlife/go-patch/patch"
	_ "github.com/tidwall/gjson"
	_ "k8s.io/apimachinery/pkg/labels"
)
