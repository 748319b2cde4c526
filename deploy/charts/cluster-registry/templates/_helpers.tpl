{{/* Names as upstream's chart makes them, so the same release name and overrides give the same objects. */}}
{{- define "cluster-registry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cluster-registry.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The controller's objects, its ServiceAccount and its roles (not shortened, as upstream's). */}}
{{- define "cluster-registry.controller" -}}
{{- include "cluster-registry.fullname" . }}-controller
{{- end -}}

{{/* The identity peers read this cluster with. */}}
{{- define "cluster-registry.reader" -}}
{{- include "cluster-registry.controller" . }}-reader
{{- end -}}

{{- define "cluster-registry.webhook" -}}
{{- include "cluster-registry.controller" . }}-{{ .Values.webhooks.clusterValidator.nameSuffix }}
{{- end -}}

{{- define "cluster-registry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cluster-registry.name" . }}-controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Only labels that hold however the objects are applied (helm install, or the rendered manifests with kubectl). */}}
{{- define "cluster-registry.labels" -}}
app: {{ include "cluster-registry.controller" . }}
{{ include "cluster-registry.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: cluster-registry-controller
app.kubernetes.io/part-of: {{ include "cluster-registry.name" . }}
{{- end -}}

{{- define "cluster-registry.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) | quote -}}
{{- end -}}

{{/* Where hub credentials are kept: out of the release namespace, whose Secrets every member reads. */}}
{{- define "cluster-registry.hubCredentialsNamespace" -}}
{{- default (printf "%s-hub" .Release.Namespace) .Values.hubCredentials.namespace -}}
{{- end -}}

{{/* A setting quoted for the controller's environment: a whole number from a values file is a float to Helm, printed whole, not as 3.3554432e+07, which the controller refuses. */}}
{{- define "cluster-registry.setting" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) -}}{{ int64 . | quote }}{{- else -}}{{ . | quote }}{{- end -}}
{{- end -}}
