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

{{/*
Variables given in values (config.extra, <component>.extraEnv), checked by the one rule for them:
a name the chart sets itself fails, naming the value to use instead, and so does a secret (those
go in the Secret). Returns a JSON object, name → value as a string (a whole number as one: YAML
gives 3600000 as a float, which would print 3.6e+06); a null value is left out, as Helm unsets it.
  include "timeshare.checkedEnv" (dict "at" "api.extraEnv" "vars" .Values.api.extraEnv "own" (dict "PORT" "use api.port instead"))
"own": what the containers the values reach set in their env, each with the remedy to print.
*/}}
{{- define "timeshare.checkedEnv" -}}
{{- $chart := dict
  "LOG_LEVEL" "use config.logLevel instead"
  "TIMESHARE_REDIS_PREFIX" "use config.redisPrefix instead"
  "TIMESHARE_MAX_JOBS_PER_DEVICE" "use config.maxJobsPerDevice instead"
  "TIMESHARE_NODE_TIMEOUT_MS" "use config.nodeTimeoutMs instead"
  "TIMESHARE_API_URL" "not configurable: the API Service's address in the cluster"
  "TIMESHARE_S3_BUCKET" "use objectStorage.bucket instead"
  "TIMESHARE_S3_ENDPOINT" "use objectStorage.endpoint instead"
  "TIMESHARE_S3_REGION" "use objectStorage.region instead"
  "TIMESHARE_S3_PREFIX" "use objectStorage.prefix instead"
  "TIMESHARE_S3_FORCE_PATH_STYLE" "use objectStorage.forcePathStyle instead" -}}
{{- $secrets := dict
  "TIMESHARE_ADMIN_KEY" "secrets.adminKey"
  "TIMESHARE_JWT_SECRET" "secrets.jwtSecret"
  "TIMESHARE_NODE_KEY" "secrets.nodeKey"
  "DATABASE_URL" "secrets.databaseUrl"
  "REDIS_URL" "secrets.redisUrl"
  "AWS_ACCESS_KEY_ID" "secrets.s3AccessKeyId"
  "AWS_SECRET_ACCESS_KEY" "secrets.s3SecretAccessKey" -}}
{{- $own := merge (dict) (.own | default dict) $chart -}}
{{- $out := dict -}}
{{- range $name, $value := .vars -}}
{{- $at := printf "%s.%s" $.at $name -}}
{{- if hasKey $own $name -}}
{{- fail (printf "%s: the chart sets %s itself; %s" $at $name (get $own $name)) -}}
{{- else if hasPrefix "TIMESHARE_S3_" $name -}}
{{- fail (printf "%s: the chart sets the TIMESHARE_S3_ variables itself; use objectStorage instead" $at) -}}
{{- else if hasKey $secrets $name -}}
{{- fail (printf "%s: a secret, not for a ConfigMap or a pod spec; use %s or secrets.existingSecret instead" $at (get $secrets $name)) -}}
{{- else if or (kindIs "map" $value) (kindIs "slice" $value) -}}
{{- fail (printf "%s: a string (or a number, a boolean), not a %s" $at (kindOf $value)) -}}
{{- else if not (kindIs "invalid" $value) -}}
{{- $str := toString $value -}}
{{- if and (kindIs "float64" $value) (eq $value (float64 (int64 $value))) -}}
{{- $str = int64 $value | toString -}}
{{- end -}}
{{- $_ := set $out $name $str -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
What each component's container sets in its own env (the templates that set them are beside each
name), with the remedy to print when a value names it. JSON: component → name → remedy.
*/}}
{{- define "timeshare.componentEnv" -}}
{{- toJson (dict
  "api" (dict
    "HOST" "not configurable: the API listens on every address of its pod"
    "PORT" "use api.port instead"
    "TIMESHARE_API_WORKERS" "use api.workers instead")
  "scheduler" (dict
    "TIMESHARE_METRICS_PORT" "use scheduler.metricsPort instead")
  "webhooks" (dict)
  "worker" (dict
    "TIMESHARE_POOL" "use worker.pool instead"
    "TIMESHARE_METRICS_PORT" "use worker.metricsPort instead"
    "TIMESHARE_DRAIN_TIMEOUT_MS" "use worker.terminationGracePeriodSeconds instead (the drain gets it less 20 s)"
    "NVIDIA_DRIVER_CAPABILITIES" "not configurable: compute,utility (nvidia-smi reads the GPUs)"
    "TIMESHARE_NODE_NAME" "not configurable: the Kubernetes node's name")) -}}
{{- end -}}

{{/*
Every component's own names at once, for config.extra: a value there reaches every container,
and one a container sets in its env would be silently overridden in it (env wins over envFrom).
The remedy names the component, and lists each where two set the same name.
*/}}
{{- define "timeshare.everyComponentEnv" -}}
{{- $all := dict -}}
{{- range $component, $names := include "timeshare.componentEnv" . | fromJson -}}
{{- range $name, $remedy := $names -}}
{{- $line := printf "%s (the %s container's)" $remedy $component -}}
{{- if hasKey $all $name -}}
{{- $line = printf "%s; %s" (get $all $name) $line -}}
{{- end -}}
{{- $_ := set $all $name $line -}}
{{- end -}}
{{- end -}}
{{- toJson $all -}}
{{- end -}}

{{/*
A component's own variables (<component>.extraEnv) as env entries of its container, which win over
the ConfigMap's (config.extra) there: Kubernetes gives env precedence over envFrom. Refused where
they name what the container sets itself (timeshare.componentEnv), a ConfigMap's name or a secret.
  {{- with include "timeshare.extraEnv" (dict "root" $ "component" "api") }}
  {{- . | nindent 12 }}
  {{- end }}
*/}}
{{- define "timeshare.extraEnv" -}}
{{- $vars := (index .root.Values .component).extraEnv -}}
{{- $at := printf "%s.extraEnv" .component -}}
{{- $own := get (include "timeshare.componentEnv" . | fromJson) .component -}}
{{- $entries := list -}}
{{- range $name, $value := include "timeshare.checkedEnv" (dict "at" $at "vars" $vars "own" $own) | fromJson -}}
{{- $entries = append $entries (printf "- name: %s\n  value: %s" ($name | quote) ($value | quote)) -}}
{{- end -}}
{{- join "\n" $entries -}}
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
