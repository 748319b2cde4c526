{{/* Names as upstream's chart makes them, so a release named cluster-registry gives the same objects. */}}
{{- define "cluster-registry.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cluster-registry.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The controller's objects, its ServiceAccount and its roles. */}}
{{- define "cluster-registry.controller" -}}
{{- printf "%s-controller" (include "cluster-registry.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The identity peers read this cluster with. */}}
{{- define "cluster-registry.reader" -}}
{{- printf "%s-reader" (include "cluster-registry.controller" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cluster-registry.webhook" -}}
{{- printf "%s-%s" (include "cluster-registry.controller" .) .Values.webhooks.clusterValidator.nameSuffix | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cluster-registry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cluster-registry.name" . }}-controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Only labels that hold however the objects are applied (helm install, or the rendered manifests with kubectl). */}}
{{- define "cluster-registry.labels" -}}
{{ include "cluster-registry.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: controller
app.kubernetes.io/part-of: cluster-registry
{{- end -}}

{{- define "cluster-registry.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
