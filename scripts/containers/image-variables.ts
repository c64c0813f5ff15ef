// The image variables docker-compose.yml and test/support/testcontainers.ts read, each with its official image (the
// default wherever a registry is reachable) and the image `npm run images` builds for it (images/<image>/).
export const IMAGE_VARIABLES = [
  { name: "PSS_IMAGE", image: "service", official: "partner-syndication-service:local" },
  { name: "PSS_POSTGRES_IMAGE", image: "postgres", official: "postgres:16" },
  { name: "PSS_REDIS_IMAGE", image: "redis", official: "redis:7" },
  { name: "PSS_KAFKA_IMAGE", image: "kafka", official: "apache/kafka:3.9.1" },
  { name: "PSS_OPENSEARCH_IMAGE", image: "opensearch", official: "opensearchproject/opensearch:2.19.1" },
  { name: "PSS_S3_IMAGE", image: "s3proxy", official: "andrewgaul/s3proxy:s3proxy-3.0.0" },
  { name: "PSS_SMTP_IMAGE", image: "smtp-sink", official: "axllent/mailpit:v1.27" },
  { name: "PSS_BALANCER_IMAGE", image: "balancer", official: "haproxy:2.6" },
  { name: "PSS_PROMETHEUS_IMAGE", image: "prometheus", official: "prom/prometheus:v3.5.0" },
  { name: "PSS_ZIPKIN_IMAGE", image: "zipkin", official: "openzipkin/zipkin:3.5.1" },
] as const;

export type ImageVariable = (typeof IMAGE_VARIABLES)[number]["name"];

/** The image for a variable: the environment's, else the official default. */
export function imageFor(name: ImageVariable, env: Record<string, string | undefined> = process.env): string {
  return env[name] || IMAGE_VARIABLES.find((v) => v.name === name)!.official;
}
