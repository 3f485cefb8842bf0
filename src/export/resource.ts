import { hostname } from "node:os";
import { defaultResource, type Resource, resourceFromAttributes } from "@opentelemetry/resources";
import type { ExportConfig } from "../config/config.ts";

export const DEFAULT_SERVICE_NAME = "cline-otel";

/**
 * The exported Resource. `service.instance.id` is the ledger's persisted instance id, so a
 * restart continues the same streams and two machines never merge behind a gateway.
 * OTEL_RESOURCE_ATTRIBUTES may add or override attributes (overriding service.instance.id
 * makes its uniqueness the user's business); OTEL_SERVICE_NAME beats a service.name given there.
 * `user.name` (CLINE_OTEL_USER, else the OS account) is a default that a `user.name` there overrides.
 */
export function buildResource(
  cfg: Pick<ExportConfig, "serviceName" | "resourceAttributes"> & {
    readonly teams?: Pick<ExportConfig["teams"], "user">;
  },
  instanceId: string,
  serviceVersion: string,
  hostName: string = hostname(),
): Resource {
  const user = cfg.resourceAttributes;
  const serviceName =
    cfg.serviceName !== DEFAULT_SERVICE_NAME
      ? cfg.serviceName
      : (user["service.name"] ?? DEFAULT_SERVICE_NAME);
  return defaultResource().merge(
    resourceFromAttributes({
      "service.version": serviceVersion,
      "host.name": hostName,
      "service.instance.id": instanceId,
      ...(cfg.teams?.user === undefined ? {} : { "user.name": cfg.teams.user }),
      ...user,
      "service.name": serviceName,
    }),
  );
}
