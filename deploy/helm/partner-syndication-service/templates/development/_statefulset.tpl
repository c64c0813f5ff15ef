{{/* One development server: a StatefulSet with its own PVC (deleted with the StatefulSet) and a Service.
     (dict "root" $ "name" "redis" "values" .Values.development.redis "ports" (list 6379) "mountPath" "/data"
           "env" (list ...) "command" (list ...) "probe" (dict ...)) */}}
{{- define "pss.devStatefulSet" -}}
{{- $root := .root }}
{{- $svc := include "pss.dev" (dict "root" $root "name" .name) }}
apiVersion: v1
kind: Service
metadata:
  name: {{ $svc }}
  labels:
    {{- include "pss.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .name }}
spec:
  selector:
    {{- include "pss.selector" (dict "root" $root "component" .name) | nindent 4 }}
  ports:
    {{- range .ports }}
    - { name: p{{ . }}, port: {{ . }}, targetPort: {{ . }} }
    {{- end }}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ $svc }}
  labels:
    {{- include "pss.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .name }}
spec:
  serviceName: {{ $svc }}
  replicas: 1
  # The PVC goes with the release (helm uninstall): development data only.
  persistentVolumeClaimRetentionPolicy: { whenDeleted: Delete, whenScaled: Retain }
  selector:
    matchLabels:
      {{- include "pss.selector" (dict "root" $root "component" .name) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "pss.selector" (dict "root" $root "component" .name) | nindent 8 }}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      serviceAccountName: {{ include "pss.serviceAccountName" $root }}
      terminationGracePeriodSeconds: 30
      securityContext:
        seccompProfile: { type: RuntimeDefault }
        {{- with .fsGroup }}
        fsGroup: {{ . }}
        {{- end }}
      containers:
        - name: {{ .name }}
          image: {{ .values.image }}
          imagePullPolicy: {{ $root.Values.development.imagePullPolicy }}
          {{- with .command }}
          command: {{ toJson . }}
          {{- end }}
          {{- with .env }}
          env:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          ports:
            {{- range .ports }}
            - containerPort: {{ . }}
            {{- end }}
          readinessProbe:
            {{- toYaml .probe | nindent 12 }}
            periodSeconds: 3
            timeoutSeconds: 10
            failureThreshold: 3
          securityContext:
            allowPrivilegeEscalation: false
          resources:
            {{- toYaml .values.resources | nindent 12 }}
          volumeMounts:
            - { name: data, mountPath: {{ .mountPath }} }
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: [ReadWriteOnce]
        {{- with $root.Values.development.storageClassName }}
        storageClassName: {{ . }}
        {{- end }}
        resources:
          requests:
            storage: {{ .values.storage }}
{{- end -}}
