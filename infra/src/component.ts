export interface InfraPaths {
  /** Repository root. */
  root: string;
  /** Per-checkout server data: <root>/.data */
  dataDir: string;
  /** Downloads shared between checkouts and runs (Maven jars). */
  cacheDir: string;
  /**
   * Under root: where servers that run as a user of their own (PostgreSQL, as `postgres`) keep their files, one
   * directory per checkout, so that user reaches them whatever the checkout's permissions (postgres.ts).
   */
  serverUserHome?: string;
}

/** One server the runner manages. */
export interface Component {
  name: "postgres" | "redis" | "kafka" | "opensearch" | "s3" | "zipkin";
  /** The URL services use, in the variable they read it from. */
  env: { name: string; value: string };
  /**
   * Further variables that go with this server's URL (the S3 bucket and credentials): given to the services
   * whenever this local server is used, never when its URL variable is configured.
   */
  companions?: Record<string, string>;
  logFile: string;
  running(): Promise<boolean>;
  /** Installs or downloads what is missing, initialises data once, starts the server. */
  start(): Promise<void>;
  ready(): Promise<boolean>;
  stop(): Promise<void>;
  readyTimeoutMs: number;
}
