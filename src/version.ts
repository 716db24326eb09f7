/** Version of the interface the service implements (SPEC §9); also the OpenAPI info.version. */
export const API_VERSION = '1.5.0';
