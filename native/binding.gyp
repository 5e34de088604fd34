# Coffre's optional native addon (native/module.c lists its parts). Built by
# scripts/build-native.mjs after `npm ci`; without it Coffre does the same work in JavaScript.
{
  "targets": [
    {
      "target_name": "coffre_native",
      "sources": ["module.c", "aes-gcm.c", "durable-files.c", "read-open.c", "seal-write.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
