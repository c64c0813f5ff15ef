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
app.kubernetes.io/part-of: {{ .Chart.Name }}
{{- end -}}

{{/* Every label of one component's objects and pod templates: (dict "root" $ "component" "api"). */}}
{{- define "pss.componentLabels" -}}
{{ include "pss.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "api"). */}}
{{- define "pss.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* repository:tag, or repository[:tag]@digest when a digest is given (the digest decides what is pulled). */}}
{{- define "pss.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s%s@%s" .Values.image.repository (ternary (printf ":%s" .Values.image.tag) "" (ne .Values.image.tag "")) .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Development: the development values or any nodeEnv but production (generated keys and defaults allowed). */}}
{{- define "pss.isDevelopment" -}}
{{- if or .Values.development.enabled (ne .Values.nodeEnv "production") -}}true{{- end -}}
{{- end -}}

{{- define "pss.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "pss.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required with serviceAccount.create=false (a ServiceAccount that exists)" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The migration hook's ServiceAccount: a hook of its own, made before the Job (the release's is not there yet). */}}
{{- define "pss.migrateServiceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- printf "%s-migrate" (include "pss.fullname" .) -}}
{{- else -}}
{{- include "pss.serviceAccountName" . -}}
{{- end -}}
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

{{/* Each service's health port (/healthz, /readyz, /metrics), as compose has them. */}}
{{- define "pss.healthPorts" -}}
api: 8085
marketplace: 8089
outbox-relay: 8084
media: 8081
indexer: 8082
leads: 8083
webhooks: 8086
portal: 8087
{{- end -}}

{{- define "pss.envSecret" -}}
{{- printf "%s-env" (include "pss.fullname" .) -}}
{{- end -}}

{{/* DATABASE_URL from its Secret, and the paths of its TLS files (pss.tlsVolumes): (dict "root" $ "secret" name). */}}
{{- define "pss.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ if .root.Values.database.existingSecret }}{{ .root.Values.database.existingSecretKey }}{{ else }}url{{ end }}
{{- range $name, $path := (include "pss.tlsFiles" (dict "root" .root "server" "database") | fromYaml) }}
- { name: {{ $name }}, value: {{ $path | quote }} }
{{- end }}
{{- end -}}

{{/* The servers whose TLS files may come from a Secret of the operator's, and their variables' prefix. */}}
{{- define "pss.tlsServers" -}}
database: DATABASE
redis: REDIS
kafka: KAFKA
opensearch: OPENSEARCH
{{- end -}}

{{/* <PREFIX>_TLS_{CA,CERT,KEY}_FILE: path of one server's TLS files, those its tls values name (YAML map; empty
     without tls.existingSecret). (dict "root" $ "server" "kafka"). */}}
{{- define "pss.tlsFiles" -}}
{{- $tls := (get .root.Values .server).tls -}}
{{- $prefix := get (include "pss.tlsServers" . | fromYaml) .server -}}
{{- if $tls.existingSecret }}
{{- range $file, $key := dict "CA" $tls.caKey "CERT" $tls.certKey "KEY" $tls.keyKey }}
{{- if $key }}
{{ printf "%s_TLS_%s_FILE" $prefix $file }}: {{ printf "/etc/pss/tls/%s/%s" $.server $key | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The volumes of the TLS Secrets (each server's, read-only; only `only` when given): (dict "root" $ "only" list?). */}}
{{- define "pss.tlsVolumes" -}}
{{- range $server, $_ := include "pss.tlsServers" . | fromYaml }}
{{- if or (not $.only) (has $server $.only) }}
{{- with (get $.root.Values $server).tls.existingSecret }}
- name: tls-{{ $server }}
  secret: { secretName: {{ . }}, defaultMode: 0440 }
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Their mounts at /etc/pss/tls/<server>: (dict "root" $ "only" list?). The files are re-read when the Secret
     changes (the services check at most once a second): a rotated CA needs no restart. */}}
{{- define "pss.tlsMounts" -}}
{{- range $server, $_ := include "pss.tlsServers" . | fromYaml }}
{{- if or (not $.only) (has $server $.only) }}
{{- with (get $.root.Values $server).tls.existingSecret }}
- { name: tls-{{ $server }}, mountPath: /etc/pss/tls/{{ $server }}, readOnly: true }
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* One variable from a Secret key: (dict "name" "REDIS_URL" "secret" "x" "key" "url"). */}}
{{- define "pss.secretVar" -}}
- name: {{ .name }}
  valueFrom: { secretKeyRef: { name: {{ .secret }}, key: {{ .key | quote }} } }
{{- end -}}

{{/* What every process of the release reads from Secrets besides the database: Redis and OpenSearch URLs (they may
     carry a password) and the extra environment (`env`, then the component's own). (dict "root" $ "component" c). */}}
{{- define "pss.secretEnv" -}}
{{- $root := .root -}}
{{- $own := include "pss.envSecret" $root -}}
{{- with $root.Values.redis.existingSecret }}
{{ include "pss.secretVar" (dict "name" "REDIS_URL" "secret" . "key" $root.Values.redis.existingSecretKey) }}
{{- else }}
{{ include "pss.secretVar" (dict "name" "REDIS_URL" "secret" $own "key" "REDIS_URL") }}
{{- end }}
{{- with $root.Values.opensearch.existingSecret }}
{{ include "pss.secretVar" (dict "name" "OPENSEARCH_URL" "secret" . "key" $root.Values.opensearch.existingSecretKey) }}
{{- else }}
{{ include "pss.secretVar" (dict "name" "OPENSEARCH_URL" "secret" $own "key" "OPENSEARCH_URL") }}
{{- end }}
{{- /* Passwords apart from the URLs: the chart's Secret, or an optional key of the operator's. */}}
{{- range $server, $var := dict "redis" "REDIS_PASSWORD" "opensearch" "OPENSEARCH_PASSWORD" }}
{{- $v := get $root.Values $server }}
{{- if $v.existingSecret }}
- name: {{ $var }}
  valueFrom: { secretKeyRef: { name: {{ $v.existingSecret }}, key: {{ $v.existingSecretPasswordKey | quote }}, optional: true } }
{{- else if $v.password }}
{{ include "pss.secretVar" (dict "name" $var "secret" $own "key" $var) }}
{{- end }}
{{- end }}
{{- with $root.Values.kafka.sasl }}
{{- if .existingSecret }}
{{ include "pss.secretVar" (dict "name" "KAFKA_SASL_PASSWORD" "secret" .existingSecret "key" .existingSecretKey) }}
{{- else if .password }}
{{ include "pss.secretVar" (dict "name" "KAFKA_SASL_PASSWORD" "secret" $own "key" "KAFKA_SASL_PASSWORD") }}
{{- end }}
{{- end }}
{{- range $k, $_ := $root.Values.env }}
{{ include "pss.secretVar" (dict "name" $k "secret" $own "key" $k) }}
{{- end }}
{{- with .component }}
{{- range $k, $_ := (get $root.Values.services .).env }}
{{ include "pss.secretVar" (dict "name" $k "secret" $own "key" (printf "%s.%s" $.component $k)) }}
{{- end }}
{{- end }}
{{- end -}}

{{/* S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY. */}}
{{- define "pss.s3Env" -}}
{{ include "pss.secretVar" (dict "name" "S3_ACCESS_KEY_ID" "secret" (include "pss.s3Secret" .) "key" "accessKeyId") }}
{{ include "pss.secretVar" (dict "name" "S3_SECRET_ACCESS_KEY" "secret" (include "pss.s3Secret" .) "key" "secretAccessKey") }}
{{- end -}}

{{- define "pss.webhookKeyEnv" -}}
{{ include "pss.secretVar" (dict "name" "WEBHOOK_SECRET_KEY" "secret" (include "pss.webhookKeySecret" .) "key" (ternary .Values.webhookSecretKey.existingSecretKey "key" (ne .Values.webhookSecretKey.existingSecret ""))) }}
{{- end -}}

{{/* Pod annotations that restart pods on a change: the ConfigMap's hash (no credentials in it), the Secrets the
     chart makes fingerprinted with a key only the operator holds (a bare hash of them on every pod would let
     anyone who may read pods test guesses of a weak password offline), and rollout.generation. */}}
{{- define "pss.rolloutAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- with (include "pss.fingerprintKey" .) }}
fingerprint/secrets: {{ printf "%s\n%s" . (include (print $.Template.BasePath "/secrets.yaml") $) | sha256sum }}
{{- end }}
{{- with .Values.rollout.generation }}
rollout/generation: {{ . | toString | quote }}
{{- end }}
{{- end -}}

{{/* The fingerprint's key: webhookSecretKey.value, secret material the operator gave the chart. Without it (the
     key in a Secret of yours) there is no fingerprint: raise rollout.generation after changing a credential. */}}
{{- define "pss.fingerprintKey" -}}
{{- .Values.webhookSecretKey.value -}}
{{- end -}}

{{/* Scheduling of one component: its own setting, else the release-wide one. (dict "root" $ "values" $v). */}}
{{- define "pss.scheduling" -}}
{{- $r := .root.Values -}}
{{- $v := .values -}}
{{- with (default $r.priorityClassName $v.priorityClassName) }}
priorityClassName: {{ . }}
{{- end }}
{{- with (default $r.nodeSelector $v.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $r.tolerations $v.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $r.affinity $v.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $r.topologySpreadConstraints $v.topologySpreadConstraints) }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
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

{{/* A pod that runs the admin CLI with the services' settings (backup, restore): (dict "root" $ "name" "backup"
     "script" "…sh…" "databaseSecret" name "databaseKey" key "env" (list …) "volumes" (list …) "mounts" (list …)
     "resources" {…}). The script runs under sh: BACKUP_TARGET and the time are put together there. */}}
{{- define "pss.adminPod" -}}
{{- $root := .root -}}
metadata:
  labels:
    {{- include "pss.componentLabels" (dict "root" $root "component" .name) | nindent 4 }}
spec:
  restartPolicy: Never
  serviceAccountName: {{ include "pss.serviceAccountName" $root }}
  {{- include "pss.podSecurity" $root | nindent 2 }}
  {{- with (include "pss.scheduling" (dict "root" $root "values" (dict)) | trim) }}{{ . | nindent 2 }}{{ end }}
  containers:
    - name: {{ .name }}
      image: {{ include "pss.image" $root }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      command: ["sh", "-c", {{ .script | quote }}]
      envFrom:
        - configMapRef:
            name: {{ include "pss.fullname" $root }}-config
      env:
        - name: DATABASE_URL
          valueFrom: { secretKeyRef: { name: {{ .databaseSecret }}, key: {{ .databaseKey | quote }} } }
        {{- range $name, $path := (include "pss.tlsFiles" (dict "root" $root "server" "database") | fromYaml) }}
        - { name: {{ $name }}, value: {{ $path | quote }} }
        {{- end }}
        {{- include "pss.s3Env" $root | nindent 8 }}
        {{- include "pss.secretEnv" (dict "root" $root) | nindent 8 }}
        {{- include "pss.secretVar" (dict "name" "BACKUP_SIGNING_KEY" "secret" (include "pss.backupSigningKeySecret" $root) "key" (ternary $root.Values.backup.signingKey.existingSecretKey "key" (ne $root.Values.backup.signingKey.existingSecret "")) ) | nindent 8 }}
        - { name: TMPDIR, value: /tmp }
        {{- with .env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      securityContext:
        {{- toYaml $root.Values.securityContext | nindent 8 }}
      resources:
        {{- toYaml .resources | nindent 8 }}
      volumeMounts:
        - { name: tmp, mountPath: /tmp }
        {{- include "pss.tlsMounts" (dict "root" $root) | nindent 8 }}
        {{- with .mounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir: { sizeLimit: {{ $root.Values.backup.scratchSizeLimit }} }
    {{- include "pss.tlsVolumes" (dict "root" $root) | nindent 4 }}
    {{- with .volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* Where backups are: s3://bucket/prefix or /backup/ on the claim (dict "root" $ "kind" s3|pvc). */}}
{{- define "pss.backupLocation" -}}
{{- if eq .kind "s3" -}}
{{- printf "s3://%s/%s" (default .root.Values.s3.bucket .root.Values.backup.bucket) .root.Values.backup.prefix -}}
{{- else -}}
/backup/
{{- end -}}
{{- end -}}

{{/* The Secret with BACKUP_SIGNING_KEY: yours, or the chart's from backup.signingKey.value; one is required. */}}
{{- define "pss.backupSigningKeySecret" -}}
{{- if .Values.backup.signingKey.existingSecret -}}
{{- .Values.backup.signingKey.existingSecret -}}
{{- else -}}
{{- $_ := required "backup.signingKey.value or backup.signingKey.existingSecret is required for backups and restores: the key that seals each backup's manifest (32 bytes, e.g. $(head -c 32 /dev/urandom | base64))" .Values.backup.signingKey.value -}}
{{- printf "%s-backup-signing-key" (include "pss.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "pss.backupClaim" -}}
{{- default (printf "%s-backup" (include "pss.fullname" .)) .Values.backup.pvc.existingClaim -}}
{{- end -}}

{{- /* Where the services send their spans: tracing.zipkinUrl, else the release's own Zipkin, else nothing (off). */ -}}
{{- define "pss.zipkinUrl" -}}
{{- if .Values.tracing.zipkinUrl -}}{{ .Values.tracing.zipkinUrl }}
{{- else if .Values.tracing.zipkin.enabled -}}http://{{ include "pss.dev" (dict "root" . "name" "zipkin") }}:9411/api/v2/spans
{{- end -}}
{{- end -}}
