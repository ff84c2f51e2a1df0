#!/usr/bin/env bash
# Build every dataset into datasets/out/ (downloads are cached in datasets/cache/).
# Run from anywhere:  bash datasets/build_all.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 datasets/build_vader.py
python3 datasets/build_fortunes.py
python3 datasets/build_fortunes_lang.py
python3 datasets/build_debian_sections.py
python3 datasets/build_wordnet_lexnames.py
python3 datasets/build_wordnet_hypernyms.py
python3 datasets/build_peoples_daily.py
