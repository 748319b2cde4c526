package main

// Op "template": renders a Go text/template with sprig v2.22.0's TxtFuncMap, the way upstream
// renders ResourceSyncRule override values (template name "", data map Object/Cluster/LocalCluster).
//
// Request: {"op":"template","template":"...","name":"...",
//           "object":{...},"cluster":{...},"localCluster":{...}}   (upstream data model), or
//          {"op":"template","template":"...","data":<any JSON>}     (raw mode, engine tests).
// Numbers decode the way unstructured does: integers as int64, everything else as float64.

import (
	"bytes"
	"encoding/json"
	"text/template"

	"github.com/Masterminds/sprig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// The Cluster types below mirror api/v1alpha1 of cisco-open/cluster-registry-controller: same
// field names, Go types and json tags, so field access and %v printing behave like upstream.

type AuthInfo struct {
	SecretRef NamespacedName `json:"secretRef,omitempty"`
}

type NamespacedName struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type KubernetesAPIEndpoint struct {
	ClientNetwork string `json:"clientNetwork,omitempty"`
	ServerAddress string `json:"serverAddress,omitempty"`
	CABundle      []byte `json:"caBundle,omitempty"`
}

type ClusterSpec struct {
	ClusterID              types.UID               `json:"clusterID"`
	AuthInfo               AuthInfo                `json:"authInfo,omitempty"`
	KubernetesAPIEndpoints []KubernetesAPIEndpoint `json:"kubernetesApiEndpoints,omitempty"`
}

type ClusterType string

type ClusterState string

type ClusterConditionType string

// ConditionStatus stands in for k8s.io/api/core/v1.ConditionStatus (a string type), which
// this module does not require.
type ConditionStatus string

type ClusterMetadata struct {
	Provider          string    `json:"provider,omitempty"`
	Distribution      string    `json:"distribution,omitempty"`
	KubeProxyVersions []string  `json:"kubeProxyVersions,omitempty"`
	KubeletVersions   []string  `json:"kubeletVersions,omitempty"`
	Version           string    `json:"version,omitempty"`
	Locality          *Locality `json:"locality,omitempty"`
}

type Locality struct {
	Region  string   `json:"region,omitempty"`
	Regions []string `json:"regions,omitempty"`
	Zones   []string `json:"zones,omitempty"`
}

type ClusterCondition struct {
	Type               ClusterConditionType `json:"type"`
	Status             ConditionStatus      `json:"status"`
	LastHeartbeatTime  metav1.Time          `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime metav1.Time          `json:"lastTransitionTime,omitempty"`
	Reason             string               `json:"reason,omitempty"`
	Message            string               `json:"message,omitempty"`
	TrueIsFailure      bool                 `json:"-"`
}

type ClusterStatus struct {
	State           ClusterState `json:"state,omitempty"`
	Message         string       `json:"message,omitempty"`
	Type            ClusterType  `json:"type,omitempty"`
	Leader          bool         `json:"leader,omitempty"`
	ClusterMetadata `json:",inline"`
	Conditions      []ClusterCondition `json:"conditions,omitempty"`
}

type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

type templateRequest struct {
	Template     string          `json:"template"`
	Name         string          `json:"name"`
	Data         json.RawMessage `json:"data"`
	Object       json.RawMessage `json:"object"`
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

func decodeCluster(raw json.RawMessage) (*Cluster, error) {
	c := &Cluster{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	return c, nil
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
		obj := map[string]interface{}{}
		if err := utiljson.Unmarshal(req.Object, &obj); err != nil {
			return nil, err
		}
		data["Object"] = &unstructured.Unstructured{Object: obj}
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
