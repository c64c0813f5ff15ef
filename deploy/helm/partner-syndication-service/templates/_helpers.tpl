{{/* Names: <release>-<chart> unless the release name already holds the chart's name; then <release>. */}}
{{- define "pss.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "pss.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "api"). */}}
{{- define "pss.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "pss.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The in-cluster servers of development mode, by Service name. */}}
{{- define "pss.dev" -}}
{{- printf "%s-%s" (include "pss.fullname" .root) .name -}}
{{- end -}}

{{- define "pss.databaseUrl" -}}
{{- if .Values.database.url -}}
{{- .Values.database.url -}}
{{- else if .Values.development.enabled -}}
{{- printf "postgres://pss:%s@%s:5432/pss" .Values.development.postgres.password (include "pss.dev" (dict "root" . "name" "postgres")) -}}
{{- else -}}
{{- required "database.url (or database.existingSecret) is required" .Values.database.url -}}
{{- end -}}
{{- end -}}

{{- define "pss.redisUrl" -}}
{{- if .Values.redis.url -}}{{ .Values.redis.url }}
{{- else if .Values.development.enabled -}}redis://{{ include "pss.dev" (dict "root" . "name" "redis") }}:6379
{{- else -}}{{ required "redis.url is required" .Values.redis.url }}{{- end -}}
{{- end -}}

{{- define "pss.kafkaBrokers" -}}
{{- if .Values.kafka.brokers -}}{{ .Values.kafka.brokers }}
{{- else if .Values.development.enabled -}}{{ include "pss.dev" (dict "root" . "name" "kafka") }}:9092
{{- else -}}{{ required "kafka.brokers is required" .Values.kafka.brokers }}{{- end -}}
{{- end -}}

{{- define "pss.opensearchUrl" -}}
{{- if .Values.opensearch.url -}}{{ .Values.opensearch.url }}
{{- else if .Values.development.enabled -}}http://{{ include "pss.dev" (dict "root" . "name" "opensearch") }}:9200
{{- else -}}{{ required "opensearch.url is required" .Values.opensearch.url }}{{- end -}}
{{- end -}}

{{- define "pss.s3Endpoint" -}}
{{- if .Values.s3.endpoint -}}{{ .Values.s3.endpoint }}
{{- else if .Values.development.enabled -}}http://{{ include "pss.dev" (dict "root" . "name" "s3") }}:9000
{{- else -}}{{ required "s3.endpoint is required" .Values.s3.endpoint }}{{- end -}}
{{- end -}}

{{/* development mode's S3 credentials are the compose stack's (refused by NODE_ENV=production). */}}
{{- define "pss.s3AccessKeyId" -}}
{{- if .Values.s3.accessKeyId -}}{{ .Values.s3.accessKeyId }}
{{- else if .Values.development.enabled -}}pss
{{- else -}}{{ required "s3.accessKeyId (or s3.existingSecret) is required" .Values.s3.accessKeyId }}{{- end -}}
{{- end -}}

{{- define "pss.s3SecretAccessKey" -}}
{{- if .Values.s3.secretAccessKey -}}{{ .Values.s3.secretAccessKey }}
{{- else if .Values.development.enabled -}}pss-compose-secret
{{- else -}}{{ required "s3.secretAccessKey (or s3.existingSecret) is required" .Values.s3.secretAccessKey }}{{- end -}}
{{- end -}}

{{- define "pss.smtpHost" -}}
{{- if .Values.smtp.host -}}{{ .Values.smtp.host }}
{{- else if .Values.development.enabled -}}{{ include "pss.dev" (dict "root" . "name" "smtp-sink") }}
{{- else -}}{{ required "smtp.host (or smtp.existingSecret) is required: without it leads are never e-mailed" .Values.smtp.host }}{{- end -}}
{{- end -}}

{{- define "pss.databaseSecret" -}}
{{- default (printf "%s-database" (include "pss.fullname" .)) .Values.database.existingSecret -}}
{{- end -}}
{{- define "pss.s3Secret" -}}
{{- default (printf "%s-s3" (include "pss.fullname" .)) .Values.s3.existingSecret -}}
{{- end -}}
{{- define "pss.smtpSecret" -}}
{{- default (printf "%s-smtp" (include "pss.fullname" .)) .Values.smtp.existingSecret -}}
{{- end -}}
{{- define "pss.webhookKeySecret" -}}
{{- default (printf "%s-webhook-key" (include "pss.fullname" .)) .Values.webhookSecretKey.existingSecret -}}
{{- end -}}

{{/* DATABASE_URL from its Secret: (dict "root" $ "secret" name). */}}
{{- define "pss.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ if .root.Values.database.existingSecret }}{{ .root.Values.database.existingSecretKey }}{{ else }}url{{ end }}
{{- end -}}

{{- define "pss.podSecurity" -}}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Development mode: wait until every in-cluster server accepts connections, as compose's depends_on
     service_healthy does (a worker that boots before OpenSearch or S3 answers was seen to stay unready). */}}
{{- define "pss.waitForServers" -}}
{{- $root := . -}}
{{- $targets := list }}
{{- range $name, $port := dict "postgres" 5432 "redis" 6379 "kafka" 9092 "opensearch" 9200 "s3" 9000 "smtp-sink" 1025 }}
{{- $targets = append $targets (printf "%s:%d" (include "pss.dev" (dict "root" $root "name" $name)) $port) }}
{{- end }}
- name: wait-for-servers
  image: {{ include "pss.image" $root }}
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  command:
    - bun
    - -e
    - >-
      const deadline = Date.now() + 600000;
      for (const target of process.env.WAIT_FOR.split(",")) {
        const [host, port] = target.split(":");
        for (;;) {
          const ok = await new Promise((done) => { const s = require("node:net").connect(Number(port), host, () => { s.end(); done(true); });
            s.on("error", () => done(false)); s.setTimeout(3000, () => { s.destroy(); done(false); }); });
          if (ok) { console.log("wait: " + target + " answers"); break; }
          if (Date.now() > deadline) { console.log("wait: " + target + " does not answer"); process.exit(1); }
          await Bun.sleep(1000);
        }
      }
  env:
    - name: WAIT_FOR
      value: {{ join "," $targets | quote }}
  securityContext:
    {{- toYaml $root.Values.securityContext | nindent 4 }}
  resources:
    {{- toYaml $root.Values.migrations.resources | nindent 4 }}
  volumeMounts:
    - { name: tmp, mountPath: /tmp }
{{- end -}}

{{- /* Where the services send their spans: tracing.zipkinUrl, else the release's own Zipkin, else nothing (off). */ -}}
{{- define "pss.zipkinUrl" -}}
{{- if .Values.tracing.zipkinUrl -}}{{ .Values.tracing.zipkinUrl }}
{{- else if .Values.tracing.zipkin.enabled -}}http://{{ include "pss.dev" (dict "root" . "name" "zipkin") }}:9411/api/v2/spans
{{- end -}}
{{- end -}}
