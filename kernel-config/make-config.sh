#!/usr/bin/env bash
# Derive our kernel .config from Debian's amd64 distro config: every module is
# turned off, then kernel-config/*.config fragments are merged on top and
# olddefconfig settles the rest. Fails if any fragment line did not stick.
#
# usage: make-config.sh SRCTREE OBJDIR DEBIAN_CONFIG_XZ FRAGMENT...
set -euo pipefail

src=$(realpath "$1") obj=$(realpath -m "$2") debcfg=$3
shift 3
frags=(); for f in "$@"; do frags+=("$(realpath "$f")"); done; set -- "${frags[@]}"
[ -d "$src" ] || { echo "make-config: no kernel tree at $src" >&2; exit 1; }
[ -f "$debcfg" ] || { echo "make-config: no Debian config at $debcfg (make deps installs linux-config-6.1; make kernel-tree LINUX=6.12 fetches linux-config-6.12)" >&2; exit 1; }
mkdir -p "$obj"

base=$obj/.config.debian-nomodules
xzcat "$debcfg" | sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' > "$base"

# merge_config.sh -m only merges; olddefconfig resolves dependencies after it.
(cd "$src" && KCONFIG_CONFIG="$obj/.config" scripts/kconfig/merge_config.sh -m -O "$obj" "$base" "$@" >/dev/null)
make -s -C "$src" O="$obj" olddefconfig

# what each symbol should be: the last fragment that names it wins (the debug
# fragments come after ours and override, e.g., CONFIG_LOCALVERSION)
declare -A want_of=() frag_of=()
for frag in "$@"; do
    while IFS= read -r line; do
        case "$line" in
            CONFIG_*=*) want=$line ;;
            "# CONFIG_"*" is not set") want=$line ;;
            *) continue ;;
        esac
        sym=${want#\# }
        sym=${sym%%[= ]*}
        want_of[$sym]=$want
        frag_of[$sym]=$frag
    done < "$frag"
done
bad=0
for sym in "${!want_of[@]}"; do
    want=${want_of[$sym]}
    got=$(grep -E "^(# )?${sym}[= ]" "$obj/.config" || true)
    if [ "$got" != "$want" ]; then
        # "is not set" may also be satisfied by the symbol being absent
        if [ -z "$got" ] && [ "${want#\# }" != "$want" ]; then
            continue
        fi
        echo "make-config: ${frag_of[$sym]} asks '$want', .config has '${got:-nothing}'" >&2
        bad=1
    fi
done
[ "$bad" = 0 ] || exit 1

# what our fragments change of Debian's config with modules off, both settled
# by olddefconfig, in the kernel's own format
settled=$obj/.config.debian-nomodules-settled
cp "$base" "$settled"
make -s -C "$src" O="$obj" KCONFIG_CONFIG="$settled" olddefconfig
diff=$obj/config-vs-debian.diff
"$src/scripts/diffconfig" "$settled" "$obj/.config" >"$diff"
echo "make-config: $obj/.config ($(grep -c '=y$' "$obj/.config") built-in options, $(grep -c '=m$' "$obj/.config") modules; $(wc -l <"$diff") changes from Debian's config with modules off in $diff)"
