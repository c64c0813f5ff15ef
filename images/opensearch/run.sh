#!/bin/sh
set -eu
base=/usr/share/opensearch
cat > "$base/node_1/config/opensearch.yml" <<YML
network.host: 0.0.0.0
discovery.type: single-node
path.data: $base/data
transport.port: 9300
action.auto_create_index: false
cluster.routing.allocation.disk.threshold_enabled: false
YML
# The runner's HTTP port is its base port + the node number (1).
# shellcheck disable=SC2086 # the options are a list
exec java ${OPENSEARCH_JAVA_OPTS:--Xms1g -Xmx1g} -XX:+UseG1GC -Djava.awt.headless=true -Dfile.encoding=UTF-8 \
  -cp "$base/lib/*" org.codelibs.opensearch.runner.OpenSearchRunner -basePath "$base" -numOfNode 1 -baseHttpPort 9199 -clusterName pss
