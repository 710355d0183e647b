/**
 * The agent base image: what `svc image build` makes and what a container runtime runs for a
 * harness config that names no image. Its tag carries a hash of this recipe, so a changed recipe
 * is a new image and an old engine never runs a stale one under the new name.
 */
import {createHash} from 'node:crypto'

export interface BaseImageRecipe {
  suite: string
  variant: string
  /** Debian packages beyond minbase: tmux runs the harness, git works the worktree. */
  packages: string[]
}

export const BASE_RECIPE: BaseImageRecipe = {
  suite: 'bookworm',
  variant: 'minbase',
  packages: ['tmux', 'git', 'ca-certificates', 'procps'],
}

export const BASE_IMAGE_REPO = 'localhost/svc-agent-base'

export function recipeHash(recipe: BaseImageRecipe = BASE_RECIPE): string {
  return createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 12)
}

/** `localhost/svc-agent-base:<suite>-<hash>`. */
export function baseImageTag(recipe: BaseImageRecipe = BASE_RECIPE): string {
  return `${BASE_IMAGE_REPO}:${recipe.suite}-${recipeHash(recipe)}`
}
