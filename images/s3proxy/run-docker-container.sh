#!/bin/sh
set -eu
props=/tmp/s3proxy.properties
cat > "$props" <<PROPS
s3proxy.endpoint=${S3PROXY_ENDPOINT:-http://0.0.0.0:80}
s3proxy.authorization=${S3PROXY_AUTHORIZATION:-aws-v2-or-v4}
s3proxy.identity=${S3PROXY_IDENTITY:-local-identity}
s3proxy.credential=${S3PROXY_CREDENTIAL:-local-credential}
jclouds.provider=${JCLOUDS_PROVIDER:-filesystem-nio2}
jclouds.filesystem.basedir=${JCLOUDS_FILESYSTEM_BASEDIR:-/data}
PROPS
# shellcheck disable=SC2086 # the options are a list
exec java ${S3PROXY_JAVA_OPTS:--Xmx256m} -XX:+UseSerialGC -Djava.awt.headless=true -DLOG_LEVEL=warn -cp "/opt/s3proxy/lib/*" org.gaul.s3proxy.Main --properties "$props"
