#!/bin/sh
exec java -Xmx64m -XX:TieredStopAtLevel=1 -Dlog4j.configuration=file:/opt/kafka/log4j.properties -cp "/opt/kafka/libs/*" kafka.admin.BrokerApiVersionsCommand "$@"
