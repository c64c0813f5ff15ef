// The framework's validators must not change the shared schemas of @pss/contracts: the OpenAPI document is
// built from the same objects, and changed schemas made the document depend on which requests came first.
import { expect, test } from "bun:test";
import { getResponseSchemaValidator, getSchemaValidator } from "elysia";
import { Kind, Type, type TSchema } from "@sinclair/typebox";
import * as contracts from "@pss/contracts";

const schemas = Object.entries(contracts).filter(
  (e): e is [string, TSchema] => !!e[1] && typeof e[1] === "object" && Kind in e[1],
);
// The options createApp's routes use (normalize off); `modules` is only needed for named models, which we do not use.
const options = (o: { dynamic: boolean; coerce?: boolean }) => ({ normalize: false, ...o }) as never;
const snapshot = () => JSON.parse(JSON.stringify(Object.fromEntries(schemas)));

test("Elysia fills in a missing additionalProperties on the schema object itself (why every contract schema states it)", () => {
  const unstated = Type.Object({ status: Type.String() });
  getResponseSchemaValidator({ 200: unstated }, options({ dynamic: true }));
  expect(unstated.additionalProperties).toBe(false);
});

test("validators built from every contract schema, in every role a route gives one, leave the schemas as they were", () => {
  expect(schemas.length).toBeGreaterThan(30);
  contracts.registerFormats(); // as createApp does
  const before = snapshot();
  for (const [, schema] of schemas) {
    // As the API builds them (createApp: normalize off), for a body, a query (coerced), path parameters and answers.
    const validators = [
      getSchemaValidator(schema, options({ dynamic: true })),
      getSchemaValidator(schema, options({ dynamic: true, coerce: true })),
      getSchemaValidator(schema, options({ dynamic: false, coerce: true })),
      ...Object.values(
        getResponseSchemaValidator({ 200: schema, 400: contracts.ErrorResponse }, options({ dynamic: true })) ?? {},
      ),
      ...Object.values(getResponseSchemaValidator({ 200: schema }, options({ dynamic: false })) ?? {}),
    ];
    for (const validator of validators)
      for (const value of [{}, { unexpected: 1 }, null, "text"]) validator?.Check(value);
  }
  expect(snapshot()).toEqual(before);
});
