# The optional native AES-256-GCM of the segment codecs (native/aes-gcm.c). Built by
# scripts/build-native.mjs after `npm ci`; without it the codecs use node:crypto.
{
  "targets": [
    {
      "target_name": "coffre_aes_gcm",
      "sources": ["aes-gcm.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
