{{/* Names ------------------------------------------------------------------------------------- */}}

{{- define "optimus.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "optimus.fullname" -}}
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

{{/* Name of a component's objects: <fullname>-<suffix>, at most 63 characters. */}}
{{- define "optimus.componentName" -}}
{{- printf "%s-%s" (include "optimus.fullname" .root | trunc (int (sub 62 (len .suffix))) | trimSuffix "-") .suffix -}}
{{- end -}}

{{- define "optimus.controllerName" -}}
{{- include "optimus.componentName" (dict "root" . "suffix" "controller") -}}
{{- end -}}

{{- define "optimus.brokerName" -}}
{{- include "optimus.componentName" (dict "root" . "suffix" "mosquitto") -}}
{{- end -}}

{{- define "optimus.webhookName" -}}
{{- include "optimus.componentName" (dict "root" . "suffix" "webhook") -}}
{{- end -}}

{{- define "optimus.webhookTlsSecret" -}}
{{- include "optimus.componentName" (dict "root" . "suffix" "webhook-tls") -}}
{{- end -}}

{{- define "optimus.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "optimus.controllerName" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Labels ------------------------------------------------------------------------------------ */}}

{{- define "optimus.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Common labels; call with (dict "root" $ "component" "controller"). */}}
{{- define "optimus.labels" -}}
helm.sh/chart: {{ include "optimus.chart" .root }}
{{ include "optimus.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: optimus
{{- with .root.Values.global.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "optimus.selectorLabels" -}}
app.kubernetes.io/name: {{ include "optimus.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Images ------------------------------------------------------------------------------------ */}}

{{/* repository[:tag][@digest]; call with (dict "image" .Values.image "root" $). */}}
{{- define "optimus.image" -}}
{{- $tag := default .root.Chart.AppVersion .image.tag -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "optimus.imagePullSecrets" -}}
{{- with .Values.global.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ if kindIs "map" . }}{{ .name }}{{ else }}{{ . }}{{ end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Broker ------------------------------------------------------------------------------------ */}}

{{- define "optimus.brokerExternal" -}}
{{- if .Values.broker.external.url }}true{{ end -}}
{{- end -}}

{{- define "optimus.brokerUrl" -}}
{{- if .Values.broker.external.url -}}
{{- .Values.broker.external.url -}}
{{- else -}}
{{- printf "mqtt://%s.%s.svc:%d" (include "optimus.brokerName" .) .Release.Namespace (int .Values.broker.mosquitto.port) -}}
{{- end -}}
{{- end -}}

{{/* Secret (keys username, password) of the controller's broker user. */}}
{{- define "optimus.brokerControllerSecret" -}}
{{- if .Values.broker.external.url -}}
{{- .Values.broker.external.controllerCredentialsSecret -}}
{{- else -}}
{{- include "optimus.componentName" (dict "root" . "suffix" "broker-controller") -}}
{{- end -}}
{{- end -}}

{{/*
Secret (keys username, password) of the sidecars' broker user with an external broker. The bundled
broker has none: the controller gives every job its own identities and Secret (ADR 0013).
*/}}
{{- define "optimus.brokerSidecarSecret" -}}
{{- if .Values.broker.external.url -}}
{{- .Values.broker.external.sidecarCredentialsSecret -}}
{{- end -}}
{{- end -}}

{{/* Controller ---------------------------------------------------------------------------------- */}}

{{/* JSON resources of the injected sidecar (OPTIMUS_SIDECAR_RESOURCES). */}}
{{/* Quantities become strings: the controller reads {"requests":{"cpu":"10m"},...} (string values only). */}}
{{- define "optimus.sidecarResources" -}}
{{- $out := dict -}}
{{- range $section, $quantities := .Values.sidecar.resources -}}
{{- $inner := dict -}}
{{- range $resource, $q := $quantities -}}
{{- $_ := set $inner $resource (toString $q) -}}
{{- end -}}
{{- $_ := set $out $section $inner -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* Job namespaces (issue 28) ------------------------------------------------------------------- */}}

{{/*
The namespaces where this release runs jobs, as a JSON list: watchNamespaces, and every namespace
whose labels match jobNamespaceSelector at render time (`lookup`: helm install/upgrade; `helm
template` sees none), never the release namespace. The controller's writes are bound in exactly
these; a namespace labelled later is bound at the next `helm upgrade`.
*/}}
{{- define "optimus.jobNamespaces" -}}
{{- $out := list }}
{{- range $ns := .Values.watchNamespaces }}
{{- if ne $ns $.Release.Namespace }}{{ $out = append $out $ns }}{{ end }}
{{- end }}
{{- $want := .Values.jobNamespaceSelector | default (dict) }}
{{- if $want }}
{{- $found := lookup "v1" "Namespace" "" "" | default (dict) }}
{{- range $n := (get $found "items" | default list) }}
{{- $labels := dig "metadata" "labels" (dict) $n }}
{{- $match := true }}
{{- range $k, $v := $want }}{{ if ne (toString (get $labels $k)) (toString $v) }}{{ $match = false }}{{ end }}{{ end }}
{{- $name := dig "metadata" "name" "" $n }}
{{- if and $match (ne $name $.Release.Namespace) (not (has $name $out)) }}{{ $out = append $out $name }}{{ end }}
{{- end }}
{{- end }}
{{- $out | sortAlpha | toJson -}}
{{- end -}}

{{/* jobNamespaceSelector as the controller reads it: `key=value,…` (sorted keys). */}}
{{- define "optimus.jobNamespaceSelector" -}}
{{- $parts := list }}
{{- range $k, $v := .Values.jobNamespaceSelector | default (dict) }}{{ $parts = append $parts (printf "%s=%s" $k $v) }}{{ end }}
{{- join "," $parts -}}
{{- end -}}

{{- /* The Secret (key `token`) holding the API's bearer token: the user's, or the chart's own. */ -}}
{{- define "optimus.apiTokenSecret" -}}
{{- default (printf "%s-api-token" (include "optimus.controllerName" .)) .Values.config.apiToken.existingSecret -}}
{{- end -}}
