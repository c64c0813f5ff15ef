#!/bin/sh
# KAFKA_* variables (except the JVM ones) are broker properties; defaults make a single-node KRaft broker.
set -eu
props=/opt/kafka/config/server.properties
cat > "$props" <<PROPS
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:9092
controller.listener.names=CONTROLLER
controller.quorum.voters=1@localhost:9093
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=/var/lib/kafka/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
PROPS
env | while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_LOG4J_OPTS) ;;
    KAFKA_*) echo "$(echo "${name#KAFKA_}" | tr 'A-Z_' 'a-z.')=$value" ;;
  esac
done >> "$props"
cp="/opt/kafka/libs/*"
log4j="-Dlog4j.configuration=file:/opt/kafka/log4j.properties"
logdir="$(sed -n 's/^log\.dirs=//p' "$props" | tail -n 1)"
if [ ! -f "$logdir/meta.properties" ]; then
  java -Xmx256m "$log4j" -cp "$cp" kafka.tools.StorageTool format --ignore-formatted -t "${CLUSTER_ID:-hz-heW1Ur5cgQv-GjDwg8A}" -c "$props"
fi
# shellcheck disable=SC2086 # the options are a list
exec java ${KAFKA_HEAP_OPTS:--Xms512m -Xmx512m} -XX:+UseG1GC -Djava.awt.headless=true ${KAFKA_OPTS:-} "$log4j" -cp "$cp" kafka.Kafka "$props"
