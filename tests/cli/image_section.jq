# Test input for history_image.sh and report_image.sh: a real snapshot (snapshot --root of a
# fixture) made into an image's, as docs/image.md describes it: an "image" section and, on every
# library and package, the "layer" that wrote it (a library in layer 1, a package in layer 0).
# Arguments: $tag, $manifest, $config (digests), $note and $envval (free text, hostile in the
# report test).
.root = ("/srv/images/app.tar:" + $tag)
| .image = {
    collected: true, source: "oci-archive /srv/images/app.tar",
    reference: ("/srv/images/app.tar:" + $tag), form: "oci-archive", tag: $tag,
    tags: [$tag, ("localhost/app:" + $tag)],
    manifest_digest: $manifest,
    manifest_media_type: "application/vnd.oci.image.manifest.v1+json",
    config_digest: $config,
    platform: {os: "linux", architecture: "amd64"},
    created: "2026-11-30T10:00:00Z",
    labels: {"org.opencontainers.image.version": $tag, "com.example.note": $note},
    env: [{name: "PATH", value: "/usr/local/sbin:/usr/bin"},
          {name: "HSA_OVERRIDE_GFX_VERSION", value: $envval},
          {name: "HF_TOKEN", redacted: true}],
    entrypoint: ["/bin/bash"], cmd: ["-l"], user: "root", working_dir: "/",
    layers: [
      {index: 0, digest: "sha256:\("0" * 63)a", diff_id: "sha256:\("1" * 63)a",
       media_type: "application/vnd.oci.image.layer.v1.tar+gzip", size: 29123456,
       created_by: "/bin/sh -c debootstrap trixie", files: 1234, bytes: 456789012,
       whiteouts: 0, skipped: 2},
      {index: 1, digest: "sha256:\("2" * 63)b", diff_id: "sha256:\("3" * 63)b",
       media_type: "application/vnd.oci.image.layer.v1.tar+zstd", size: 7340032,
       created_by: ("/bin/sh -c apt-get install rocm " + $note), files: 321, bytes: 9876543,
       whiteouts: 3, skipped: 0}]}
| .libraries.items |= map(. + {layer: 1})
| .packages.items |= map(. + {layer: 0})
