{{/* Names, labels and the pieces every workload shares. */}}

{{- define "timeshare.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "timeshare.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: include "timeshare.selector" (list . "api") */}}
{{- define "timeshare.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ $root.Chart.Name }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "timeshare.image" -}}
{{- $root := index . 0 -}}
{{- $name := printf "timeshare/%s" (index . 1) -}}
{{- if $root.Values.image.registry -}}
{{- $name = printf "%s/%s" (trimSuffix "/" $root.Values.image.registry) (index . 1) -}}
{{- end -}}
{{- printf "%s:%s" $name ($root.Values.image.tag | toString) -}}
{{- end -}}

{{- define "timeshare.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-credentials" (include "timeshare.fullname" .)) -}}
{{- end -}}

{{- define "timeshare.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "timeshare.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* Environment every process reads: the ConfigMap, then the credentials. */}}
{{- define "timeshare.envFrom" -}}
- configMapRef:
    name: {{ include "timeshare.fullname" . }}
- secretRef:
    name: {{ include "timeshare.secretName" . }}
{{- end -}}

{{- define "timeshare.podAnnotations" -}}
checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
{{- if .root.Values.metrics.annotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end -}}

{{/* Non-root, read-only root filesystem, no privilege escalation: the images run as uid 10001. */}}
{{- define "timeshare.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "timeshare.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}
