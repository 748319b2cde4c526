package main

// Op "typemodel": a compact description of the Go types upstream's scheme gives objects, which
// src/go/template/typemodel.json commits and the TypeScript data model rebuilds values from.
// It walks, with reflection, every kind of the scheme that has ObjectMeta (lists and option
// kinds are never synced) and every type reachable from it. The generated String() methods of
// the protobuf types (gogo's stringer, which fmt and text/template call) are read from the
// generated.pb.go sources in the module cache, so their exact text can be reproduced.
//
// Request: {"op":"typemodel"}
// Result:  {"kinds":[[group,version,kind,type,proto],...],"types":[...]} where a type is
//   "string" / "int32" / ...                     an unnamed basic type (by Go name)
//   number                                       an index into types
//   ["n", name, basic]                           a named basic type, e.g. ["n","v1.SecretType","string"]
//   ["N", name, type, 1?]                        a named slice or map type over its unnamed form;
//                                                1: a String() that prints its %v (fmt uses it for %q, %x)
//   ["*", type] ["[]", type] ["map", key, elem]  pointer, slice, map
//   ["x", name]                                  a type with hand-written behaviour (Time, Quantity, ...)
//   ["s", name, fields, str?]                    a struct; fields [[goName, type, jsonTag?, embedded?]],
//                                                jsonTag left out when it is the usual "goName,omitempty"
//                                                with a lower-case first letter;
//                                                str: the fields of its generated String(), see stringFields.
//   proto is 1 for kinds read as protobuf (client-go's scheme), 0 for JSON.

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func init() {
	handlers["typemodel"] = func(json.RawMessage) (any, error) { return buildTypeModel() }
}

// special are the types whose JSON form, printing or internals the TypeScript side writes by hand.
var special = map[string]bool{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       true,
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":  true,
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   true,
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   true,
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": true,
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    true,
}

var objectMetaType = reflect.TypeOf(metav1.ObjectMeta{})

type typeModel struct {
	Kinds [][]any `json:"kinds"`
	Types []any   `json:"types"`
}

type modelBuilder struct {
	model   typeModel
	index   map[reflect.Type]int
	sources *gogoSources
}

func buildTypeModel() (*typeModel, error) {
	b := &modelBuilder{index: map[reflect.Type]int{}, sources: newGogoSources()}
	var gvks []struct {
		g, v, k string
		t       reflect.Type
	}
	for gvk, t := range scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || t.Kind() != reflect.Struct {
			continue
		}
		if f, ok := t.FieldByName("ObjectMeta"); !ok || !f.Anonymous || f.Type != objectMetaType {
			continue
		}
		gvks = append(gvks, struct {
			g, v, k string
			t       reflect.Type
		}{gvk.Group, gvk.Version, gvk.Kind, t})
	}
	sort.Slice(gvks, func(i, j int) bool {
		a, c := gvks[i], gvks[j]
		if a.g != c.g {
			return a.g < c.g
		}
		if a.v != c.v {
			return a.v < c.v
		}
		return a.k < c.k
	})
	for _, k := range gvks {
		ref, err := b.ref(k.t)
		if err != nil {
			return nil, fmt.Errorf("%s/%s %s: %w", k.g, k.v, k.k, err)
		}
		proto := 0
		if protoScheme.Recognizes(schema.GroupVersionKind{Group: k.g, Version: k.v, Kind: k.k}) {
			proto = 1
		}
		b.model.Kinds = append(b.model.Kinds, []any{k.g, k.v, k.k, ref, proto})
	}
	return &b.model, nil
}

func typeKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

var (
	stringerType      = reflect.TypeOf((*fmt.Stringer)(nil)).Elem()
	goStringerType    = reflect.TypeOf((*fmt.GoStringer)(nil)).Elem()
	formatterType     = reflect.TypeOf((*fmt.Formatter)(nil)).Elem()
	errorType         = reflect.TypeOf((*error)(nil)).Elem()
	jsonMarshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	jsonUnmarshaler   = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// ref gives the reference to t: a basic type's name, or the index of its description.
func (b *modelBuilder) ref(t reflect.Type) (any, error) {
	if t.Name() != "" && t.PkgPath() == "" {
		switch t.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32,
			reflect.Float64, reflect.String:
			return t.Name(), nil
		}
		return nil, fmt.Errorf("unsupported predeclared type %s", t)
	}
	if i, ok := b.index[t]; ok {
		return i, nil
	}
	i := len(b.model.Types)
	b.index[t] = i
	b.model.Types = append(b.model.Types, nil)
	desc, err := b.describe(t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	b.model.Types[i] = desc
	return i, nil
}

func (b *modelBuilder) describe(t reflect.Type) (any, error) {
	if t.Name() != "" && special[typeKey(t)] {
		return []any{"x", t.String()}, nil
	}
	if t.Name() != "" {
		if err := checkMethods(t); err != nil {
			return nil, err
		}
	}
	switch t.Kind() {
	case reflect.Ptr:
		elem, err := b.ref(t.Elem())
		return []any{"*", elem}, err
	case reflect.Slice, reflect.Map:
		if t.Name() != "" {
			unnamed := reflect.SliceOf(t.Elem())
			if t.Kind() == reflect.Map {
				unnamed = reflect.MapOf(t.Key(), t.Elem())
			}
			u, err := b.ref(unnamed)
			// fmt uses such a String() for %q and %x, whose output differs from the plain value's
			if t.Implements(stringerType) {
				return []any{"N", t.String(), u, 1}, err
			}
			return []any{"N", t.String(), u}, err
		}
		elem, err := b.ref(t.Elem())
		if err != nil || t.Kind() == reflect.Slice {
			return []any{"[]", elem}, err
		}
		key, err := b.ref(t.Key())
		return []any{"map", key, elem}, err
	case reflect.Struct:
		return b.describeStruct(t)
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32,
		reflect.Float64, reflect.String:
		return []any{"n", t.String(), t.Kind().String()}, nil
	default:
		return nil, fmt.Errorf("unsupported kind %s", t.Kind())
	}
}

func (b *modelBuilder) describeStruct(t reflect.Type) (any, error) {
	fields := make([]any, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		ref, err := b.ref(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		tag := f.Tag.Get("json")
		if strings.Contains(tag, ",string") {
			return nil, fmt.Errorf("field %s: json ,string option is not modelled", f.Name)
		}
		field := []any{f.Name, ref}
		if tag != defaultTag(f.Name) || f.Anonymous {
			field = append(field, tag)
		}
		if f.Anonymous {
			field = append(field, 1)
		}
		fields = append(fields, field)
	}
	desc := []any{"s", t.String(), fields}
	if reflect.PtrTo(t).Implements(stringerType) {
		str, err := b.sources.stringFields(t)
		if err != nil {
			return nil, err
		}
		desc = append(desc, str)
	}
	return desc, nil
}

// defaultTag is the json tag most API fields have, left out of the model: the Go name with a
// lower-case first letter, omitempty.
func defaultTag(name string) string {
	return strings.ToLower(name[:1]) + name[1:] + ",omitempty"
}

// checkMethods refuses types whose printing or JSON form would depend on methods the model does
// not describe. A value String() that returns the string itself changes nothing (v1.ResourceName).
func checkMethods(t reflect.Type) error {
	for _, iface := range []reflect.Type{goStringerType, formatterType, errorType, jsonMarshalerType, jsonUnmarshaler} {
		if reflect.PtrTo(t).Implements(iface) {
			return fmt.Errorf("implements %s", iface)
		}
	}
	if t.Implements(stringerType) && !printsItsValue(t) {
		return fmt.Errorf("has a String method")
	}
	if t.Kind() != reflect.Struct && reflect.PtrTo(t).Implements(stringerType) && !t.Implements(stringerType) {
		return fmt.Errorf("has a String method on its pointer")
	}
	return nil
}

// printsItsValue tells a value String() method that prints what fmt's %v of the underlying value
// would (v1.ResourceName's string(rn), v1.ExtraValue's fmt.Sprintf("%v", []string(t))).
func printsItsValue(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		v := reflect.New(t).Elem()
		v.SetString("probe")
		return v.Interface().(fmt.Stringer).String() == "probe"
	case reflect.Slice:
		if t.Elem().Kind() != reflect.String {
			return false
		}
		v := reflect.MakeSlice(t, 2, 2)
		v.Index(0).SetString("a b")
		v.Index(1).SetString("c")
		plain := v.Convert(reflect.SliceOf(t.Elem()))
		return v.Interface().(fmt.Stringer).String() == fmt.Sprintf("%v", plain.Interface())
	}
	return false
}

// ---------------------------------------------------------------- gogo String() methods

// gogoSources finds and parses the generated.pb.go files of a package in the module cache.
type gogoSources struct {
	modcache string
	modules  map[string]string // module path -> version, from this binary's build info
	parsed   map[string]map[string]*ast.FuncDecl
}

func newGogoSources() *gogoSources {
	s := &gogoSources{modules: map[string]string{}, parsed: map[string]map[string]*ast.FuncDecl{}}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			s.modules[m.Path] = m.Version
		}
	}
	return s
}

func escapeModulePath(p string) string {
	var sb strings.Builder
	for _, r := range p {
		if r >= 'A' && r <= 'Z' {
			sb.WriteByte('!')
			r += 'a' - 'A'
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func (s *gogoSources) packageDir(pkg string) (string, error) {
	if s.modcache == "" {
		s.modcache = os.Getenv("GOMODCACHE")
		if s.modcache == "" {
			out, err := exec.Command("go", "env", "GOMODCACHE").Output()
			if err != nil {
				return "", fmt.Errorf("locating the module cache: %w", err)
			}
			s.modcache = strings.TrimSpace(string(out))
		}
	}
	best := ""
	for m := range s.modules {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return "", fmt.Errorf("no module provides %s", pkg)
	}
	return filepath.Join(s.modcache, escapeModulePath(best)+"@"+s.modules[best], strings.TrimPrefix(pkg, best)), nil
}

func (s *gogoSources) funcs(pkg string) (map[string]*ast.FuncDecl, error) {
	if fs, ok := s.parsed[pkg]; ok {
		return fs, nil
	}
	dir, err := s.packageDir(pkg)
	if err != nil {
		return nil, err
	}
	fs := map[string]*ast.FuncDecl{}
	for _, name := range []string{"generated.pb.go"} {
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, 0)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "String" || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok {
					fs[id.Name] = fn
				}
			}
		}
	}
	s.parsed[pkg] = fs
	return fs, nil
}

// stringFields describes t's generated String() as one entry per printed field, in its order,
// naming the field by its index:
//
//	index                 fmt.Sprintf("%v", this.F)
//	[index, "p"]          valueToStringGenerated(this.F): "nil" or "*" + %v of the pointee
//	[index, "S"|"V", a, b] strings.Replace(X, a, b, 1) where X is this.F.String() (S) or
//	                      fmt.Sprintf("%v", this.F) (V); "S&"/"V&" also drop the first "&";
//	                      a and b are left out when equal
//	[index, "L", prefix, elem, a, b] a repeated field: prefix, then elem (a code as above) + ","
//	                                 per element, then "}"
//	[index, "M", prefix]  a map: prefix, "%v: %v," per key in sorted order, then "}"
func (s *gogoSources) stringFields(t reflect.Type) ([]any, error) {
	fs, err := s.funcs(t.PkgPath())
	if err != nil {
		return nil, err
	}
	fn, ok := fs[t.Name()]
	if !ok {
		return nil, fmt.Errorf("String() is not a generated one")
	}
	p := &stringParser{reps: map[string][]any{}, maps: map[string]string{}}
	out, err := p.body(fn.Body.List, t)
	if err != nil {
		return nil, fmt.Errorf("String(): %w", err)
	}
	return out, nil
}

type stringParser struct {
	reps map[string][]any // repeatedStringForF -> [prefix, elem code, a, b]
	maps map[string]string
}

func strLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("expected a string literal, got %T", e)
	}
	return strconv.Unquote(lit.Value)
}

func (p *stringParser) body(stmts []ast.Stmt, t reflect.Type) ([]any, error) {
	for _, st := range stmts {
		switch s := st.(type) {
		case *ast.IfStmt, *ast.ExprStmt, *ast.ReturnStmt:
		case *ast.AssignStmt:
			lhs := s.Lhs[0].(*ast.Ident).Name
			switch {
			case lhs == "s":
				return p.join(s.Rhs[0], t)
			case s.Tok == token.DEFINE && strings.HasPrefix(lhs, "repeatedStringFor"):
				prefix, err := strLit(s.Rhs[0])
				if err != nil {
					return nil, err
				}
				p.reps[lhs] = []any{prefix}
			case s.Tok == token.DEFINE && strings.HasPrefix(lhs, "mapStringFor"):
				prefix, err := strLit(s.Rhs[0])
				if err != nil {
					return nil, err
				}
				p.maps[lhs] = prefix
			}
		case *ast.RangeStmt:
			inner, ok := s.Body.List[0].(*ast.AssignStmt)
			if !ok {
				return nil, fmt.Errorf("unexpected loop body")
			}
			name := inner.Lhs[0].(*ast.Ident).Name
			switch {
			case strings.HasPrefix(name, "repeatedStringFor"):
				bin, ok := inner.Rhs[0].(*ast.BinaryExpr)
				if !ok {
					return nil, fmt.Errorf("unexpected repeated element")
				}
				code, err := p.expr(bin.X, "f")
				if err != nil {
					return nil, err
				}
				p.reps[name] = append(p.reps[name], code...)
			case strings.HasPrefix(name, "mapStringFor"):
				call, ok := inner.Rhs[0].(*ast.CallExpr)
				if !ok {
					return nil, fmt.Errorf("unexpected map element")
				}
				if f, err := strLit(call.Args[0]); err != nil || f != "%v: %v," {
					return nil, fmt.Errorf("unexpected map element format")
				}
			}
		default:
			return nil, fmt.Errorf("unexpected statement %T", st)
		}
	}
	return nil, fmt.Errorf("no strings.Join")
}

func (p *stringParser) join(e ast.Expr, t reflect.Type) ([]any, error) {
	typeName := t.Name()
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return nil, fmt.Errorf("unexpected result expression")
	}
	list, ok := call.Args[0].(*ast.CompositeLit)
	if !ok || len(list.Elts) < 2 {
		return nil, fmt.Errorf("unexpected strings.Join argument")
	}
	if first, err := strLit(list.Elts[0]); err != nil || first != "&"+typeName+"{" {
		return nil, fmt.Errorf("unexpected opening %v", list.Elts[0])
	}
	if last, err := strLit(list.Elts[len(list.Elts)-1]); err != nil || last != "}" {
		return nil, fmt.Errorf("unexpected closing")
	}
	out := []any{}
	for _, elt := range list.Elts[1 : len(list.Elts)-1] {
		outer, ok := elt.(*ast.BinaryExpr)
		if !ok {
			return nil, fmt.Errorf("unexpected field element")
		}
		inner, ok := outer.X.(*ast.BinaryExpr)
		if !ok {
			return nil, fmt.Errorf("unexpected field element")
		}
		label, err := strLit(inner.X)
		if err != nil || !strings.HasSuffix(label, ":") {
			return nil, fmt.Errorf("unexpected field label")
		}
		name := strings.TrimSuffix(label, ":")
		code, err := p.expr(inner.Y, "this."+name)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		f, ok := t.FieldByName(name)
		if !ok || len(f.Index) != 1 {
			return nil, fmt.Errorf("String() prints %s, which is not a field", name)
		}
		if len(code) == 1 && code[0] == "v" {
			out = append(out, f.Index[0])
		} else {
			out = append(out, append([]any{f.Index[0]}, code...))
		}
	}
	return out, nil
}

func exprText(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprText(x.X) + "." + x.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

// expr codes one printed value whose operand must be `operand` (this.F or the loop's f).
func (p *stringParser) expr(e ast.Expr, operand string) ([]any, error) {
	if id, ok := e.(*ast.Ident); ok {
		if rep, ok := p.reps[id.Name]; ok {
			return append([]any{"L"}, rep...), nil
		}
		if prefix, ok := p.maps[id.Name]; ok {
			return []any{"M", prefix}, nil
		}
		return nil, fmt.Errorf("unknown variable %s", id.Name)
	}
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return nil, fmt.Errorf("unexpected expression %T", e)
	}
	fn := exprText(call.Fun)
	switch {
	case fn == "fmt.Sprintf":
		if f, err := strLit(call.Args[0]); err != nil || f != "%v" || exprText(call.Args[1]) != operand {
			return nil, fmt.Errorf("unexpected Sprintf")
		}
		return []any{"v"}, nil
	case strings.HasPrefix(fn, "valueToString"):
		if exprText(call.Args[0]) != operand {
			return nil, fmt.Errorf("unexpected valueToString operand")
		}
		return []any{"p"}, nil
	case fn == operand+".String":
		return []any{"S"}, nil
	case fn == "strings.Replace":
		a, err1 := strLit(call.Args[1])
		b, err2 := strLit(call.Args[2])
		if n, ok := call.Args[3].(*ast.BasicLit); err1 != nil || err2 != nil || !ok || n.Value != "1" {
			return nil, fmt.Errorf("unexpected strings.Replace")
		}
		inner, err := p.expr(call.Args[0], operand)
		if err != nil {
			return nil, err
		}
		code := inner[0].(string)
		if a == "&" && b == "" && len(inner) > 0 && (code == "S" || code == "V") && !strings.HasSuffix(code, "&") {
			return append([]any{code + "&"}, inner[1:]...), nil
		}
		if code == "v" {
			code = "V"
		}
		if code != "S" && code != "V" || len(inner) > 1 {
			return nil, fmt.Errorf("unexpected strings.Replace operand")
		}
		if a == b {
			return []any{code}, nil
		}
		return []any{code, a, b}, nil
	}
	return nil, fmt.Errorf("unexpected call %s", fn)
}
