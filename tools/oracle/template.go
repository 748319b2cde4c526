package main

// Op "template": renders a Go text/template with sprig v2.22.0's TxtFuncMap, the way upstream
// renders ResourceSyncRule override values (template name "", data map Object/Cluster/LocalCluster).
//
// Request: {"op":"template","template":"...","name":"...","gvk":{...}?,
//           "object":{...},"cluster":{...},"localCluster":{...}}   (upstream data model), or
//          {"op":"template","template":"...","data":<any JSON>}     (raw mode, engine tests).
// Numbers decode the way unstructured does: integers as int64, everything else as float64.

import (
	"bytes"
	"encoding/json"
	"text/template"

	"github.com/Masterminds/sprig"
	clusterregistryv1alpha1 "github.com/cisco-open/cluster-registry-controller/api/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

type templateRequest struct {
	Template     string          `json:"template"`
	Name         string          `json:"name"`
	Data         json.RawMessage `json:"data"`
	Object       json.RawMessage `json:"object"`
	GVK          *gvkJSON        `json:"gvk"`
	Cluster      json.RawMessage `json:"cluster"`
	LocalCluster json.RawMessage `json:"localCluster"`
}

// notProvided are the TxtFuncMap entries our engine deliberately lacks: env/expandenv would leak
// the controller's environment, the rest are non-hermetic (clock, randomness, network, keys).
var notProvided = []string{
	"env", "expandenv",
	"date", "date_in_zone", "date_modify", "now", "htmlDate", "htmlDateInZone", "dateInZone",
	"dateModify", "ago", "toDate", "unixEpoch",
	"randAlphaNum", "randAlpha", "randAscii", "randNumeric", "shuffle", "uuidv4",
	"getHostByName",
	"genPrivateKey", "derivePassword", "buildCustomCert", "genCA", "genSelfSignedCert",
	"genSignedCert", "encryptAES", "decryptAES",
}

func templateFuncs() template.FuncMap {
	funcs := sprig.TxtFuncMap()
	for _, name := range notProvided {
		delete(funcs, name)
	}
	return funcs
}

var clusterGVK = clusterregistryv1alpha1.GroupVersion.WithKind("Cluster")

// decodeCluster gives a Cluster as GetClusters lists it from the cache, deep-copied as
// upstream hands it to templates.
func decodeCluster(raw json.RawMessage) (*clusterregistryv1alpha1.Cluster, error) {
	obj, err := decodeObject(raw, clusterGVK, clusterGVK)
	if err != nil {
		return nil, err
	}
	return obj.(*clusterregistryv1alpha1.Cluster).DeepCopy(), nil
}

// templateObject is .Object: unstructured, or typed when the request names the source GVK (the
// Go type) while TypeMeta shows the object's own apiVersion/kind (a GVK mutation changes them).
func templateObject(req *templateRequest) (any, error) {
	if req.GVK == nil {
		obj := map[string]interface{}{}
		if err := utiljson.Unmarshal(req.Object, &obj); err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: obj}, nil
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(req.Object, &head); err != nil {
		return nil, err
	}
	return decodeObject(req.Object, req.GVK.gvk(), schema.FromAPIVersionAndKind(head.APIVersion, head.Kind))
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func templateData(req *templateRequest) (any, error) {
	if present(req.Data) {
		var data any
		err := utiljson.Unmarshal(req.Data, &data)
		return data, err
	}
	data := map[string]interface{}{}
	if present(req.Object) {
		obj, err := templateObject(req)
		if err != nil {
			return nil, err
		}
		data["Object"] = obj
	}
	for key, raw := range map[string]json.RawMessage{"Cluster": req.Cluster, "LocalCluster": req.LocalCluster} {
		if !present(raw) {
			continue
		}
		c, err := decodeCluster(raw)
		if err != nil {
			return nil, err
		}
		data[key] = c
	}
	return data, nil
}

func renderTemplate(line json.RawMessage) (any, error) {
	var req templateRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, err
	}
	data, err := templateData(&req)
	if err != nil {
		return nil, err
	}
	t, err := template.New(req.Name).Funcs(templateFuncs()).Parse(req.Template)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, err
	}
	return out.String(), nil
}

func init() {
	handlers["template"] = renderTemplate
}
